"""Several workloads side by side (`[[workload]]`): the flows frame carries each flow's
workload label, as `flows.csv` does."""

import json

import polars as pl

import repsim

SCENARIO = "scenarios/incast-with-background.toml"
#: The shipped scenario on a 32-host tree, one load balancer: a quick run of both workloads.
SMALL = {
    "topology.hosts": 32,
    "topology.hosts_per_tor": 4,
    "workload[1].size": "256KiB",
}


def test_the_flows_frame_labels_each_flow_with_its_workload(tmp_path):
    result = repsim.run(SCENARIO, lb="reps", set=SMALL)
    flows = result.flows
    assert flows.columns[-1] == "workload"
    assert flows.schema["workload"] == pl.String
    counts = dict(flows.group_by("workload").len().iter_rows())
    assert counts == {"incast": 16, "background": 32}
    incast = flows.filter(pl.col("workload") == "incast")
    assert (incast["dst"] == 0).all() and incast["src"].sort().to_list() == list(range(8, 24))
    # The file holds the same labels, row for row.
    result.write(tmp_path)
    on_disk = pl.read_csv(tmp_path / "flows.csv")
    assert on_disk["workload"].to_list() == flows["workload"].to_list()
    # summary.json has statistics per workload.
    summary = json.loads((tmp_path / "summary.json").read_text())
    per_workload = {w["workload"]: w for w in summary["runs"][0]["workloads"]}
    assert per_workload["incast"]["flows_total"] == 16
    assert per_workload["background"]["flows_total"] == 32


def test_a_single_workload_has_no_label_column():
    flows = repsim.run("scenarios/reps-micro-asymmetric.toml", lb="reps").flows
    assert "workload" not in flows.columns
