"""`repsim.load` and `repsim.run`: the same runs and files as the command, frames with the
files' columns, errors that name the field."""

import json
import subprocess
import threading
import time
import _thread

import polars as pl
import pytest

import repsim
from conftest import FABRIC

MICRO = "scenarios/reps-micro-asymmetric.toml"


def without_wall(summary_text: str) -> dict:
    """summary.json without its wall-clock times (the only field that differs between runs)."""
    s = json.loads(summary_text)
    for run in s["runs"]:
        run.pop("wall_s", None)
    return s


def test_written_files_are_the_commands_byte_for_byte(tmp_path, cli):
    subprocess.run(
        [cli, "run", MICRO, "--out", tmp_path / "cli", "--quiet", "--seed", "7", "--collect", "all"],
        check=True,
    )
    result = repsim.run(MICRO, seed=7, collect="all")
    written = {p.name for p in result.write(tmp_path / "py")}
    cli_files = {p.name for p in (tmp_path / "cli").iterdir()}
    assert cli_files == written and {"run.json", "run.complete"} <= written
    compared = 0
    # run.json and run.complete hold the time and the command line, nothing else does.
    for name in sorted(written - {"run.json", "run.complete"}):
        ours = (tmp_path / "py" / name).read_bytes()
        theirs = (tmp_path / "cli" / name).read_bytes()
        if name == "summary.json":
            assert without_wall(ours.decode()) == without_wall(theirs.decode())
        else:
            assert ours == theirs, name
        compared += 1
    assert compared >= 8


def test_threads_give_the_frames_of_one_thread():
    one = repsim.run(MICRO, collect="all")
    for threads in (2, 3):
        many = repsim.run(MICRO, collect="all", threads=threads)
        assert many.lbs == one.lbs
        for name in ("flows", "slowdown", "lb_events", "port_series", "ports", "flow_stats"):
            assert many.table(name).equals(one.table(name)), (threads, name)
        assert many.summary.drop("wall_s", strict=False).equals(
            one.summary.drop("wall_s", strict=False)
        ), threads
    # The ring AllReduce's instant triggers act at once on every host of the ring: the split
    # keeps those hosts in one partition, and the flows are those of one thread.
    ring = {"workload.file": "../data/htsim/connection_matrices/allreduce_128.cm", "end": "50us"}
    alone = repsim.run("scenarios/permutation-128.toml", lb="reps", threads=1, set=ring)
    split = repsim.run("scenarios/permutation-128.toml", lb="reps", threads=2, set=ring)
    assert split.flows.height > 0
    assert split.flows.equals(alone.flows)


def test_frames_hold_what_the_files_hold(tmp_path):
    result = repsim.run(MICRO, collect="all")
    result.write(tmp_path)
    flows = result.flows
    assert flows.columns == [
        "lb", "id", "src", "dst", "bytes", "start", "finish", "fct_us", "retransmissions",
    ]
    assert flows.schema["id"] == pl.UInt64 and flows.schema["fct_us"] == pl.Float64
    on_disk = pl.read_csv(tmp_path / "flows.csv")
    assert on_disk.columns == flows.columns
    assert on_disk["id"].to_list() == flows["id"].to_list()
    # The file rounds times to 6 decimals; the frame holds them exactly.
    assert (on_disk["fct_us"] - flows["fct_us"]).abs().max() < 1e-5
    assert result.lbs == ["reps", "ops", "ecmp"]
    assert result.summary.columns[:4] == ["lb", "seed", "flows_total", "flows_completed"]
    assert result.summary["lb"].to_list() == result.lbs
    assert result.summary["fct_max_us"].to_list() == flows.group_by("lb", maintain_order=True).agg(
        pl.col("fct_us").max()
    )["fct_us"].to_list()
    for name in ("slowdown", "lb_events", "port_series", "ports", "flow_stats"):
        frame = result.table(name)
        assert frame.columns == pl.read_csv(tmp_path / f"{name}.csv").columns, name
    assert result.series.height > 0 and "util_gbps" in result.series.columns
    assert result.slowdown["lb"].unique(maintain_order=True).to_list() == result.lbs
    assert result.collectives.height == 0
    assert set(result.tables) >= {"flows", "slowdown", "flow_stats", "lb_events", "ports", "port_series"}
    # pandas through polars, when installed.
    pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    assert len(result.flows.to_pandas()) == flows.height


def test_collectives_frame(tmp_path):
    result = repsim.run(
        "scenarios/allreduce-ring-128.toml", lb="reps", set={"workload.group": 8, "workload.size": "256KiB"}
    )
    coll = result.collectives
    assert coll.columns == ["lb", "iteration", "step", "flows", "start", "finish", "duration_us"]
    assert coll.height > 1 and coll["step"].to_list()[-1] == "all"
    result.write(tmp_path)
    assert pl.read_csv(tmp_path / "collectives.csv", infer_schema_length=0)["step"].to_list() == coll["step"].to_list()


def test_load_checks_and_round_trips():
    scn = repsim.load(MICRO, set={"transport.evs_size": 32, "cc": "nscc"})
    assert scn.name == "reps-micro-asymmetric"
    assert scn.lbs == ["reps", "ops", "ecmp"]
    assert scn.overrides == ["transport.evs_size=32", 'cc="nscc"']
    again = repsim.load(scn.to_toml())
    assert again.path is None
    assert again.to_toml() == scn.to_toml()
    assert "evs_size = 32" in again.to_toml()
    more = repsim.load(scn, set=["seed=9"])
    assert more.seed == 9 and scn.seed == 5


@pytest.mark.parametrize(
    "set_, field",
    [
        ({"transport.evs_size": 0}, "transport.evs_size"),
        ({"topology.hosts": 100}, "topology"),
        ({"workload.flows[0].size": "lots"}, "workload.flows"),
        (["queue.size"], "queue.size"),
    ],
)
def test_bad_input_raises_scenario_error_naming_the_field(set_, field):
    with pytest.raises(repsim.ScenarioError) as e:
        repsim.load(MICRO, set=set_)
    assert isinstance(e.value, ValueError)
    assert e.value.field.startswith(field), (e.value.field, str(e.value))
    assert e.value.file.endswith("reps-micro-asymmetric.toml")
    assert e.value.message in str(e.value)


def test_other_bad_input():
    with pytest.raises(repsim.ScenarioError) as e:
        repsim.load("no/such/file.toml")
    assert "cannot read" in e.value.message
    with pytest.raises(repsim.ScenarioError) as e:
        repsim.load('name = "x"\n[topology]\ntype = "fat_tree"\n')
    assert e.value.file == "<string>"
    with pytest.raises(repsim.ScenarioError, match="no load balancer|lb"):
        repsim.run(MICRO, lb="nosuch")
    with pytest.raises(ValueError, match="collect"):
        repsim.run(MICRO, collect="some")
    with pytest.raises(ValueError, match="no table"):
        repsim.run(MICRO, lb="reps").table("nosuch")
    with pytest.raises(TypeError):
        repsim.load(42)


def test_an_unreachable_destination_fails_as_the_command_does_and_keeps_the_results(tmp_path):
    # Host 8's ToR is dead for good: nothing reaches it.
    text = FABRIC + """
[workload]
type = "explicit"
flows = [{ src = 0, dst = 8, size = "64KiB" }, { src = 1, dst = 5, size = "64KiB" }]
[[fault]]
kind = "switch_down"
switch = "tor2"
[routing]
give_up_after = "1ms"
"""
    with pytest.raises(repsim.RunError, match="could not reach their destination") as e:
        repsim.run(text)
    assert isinstance(e.value, RuntimeError)
    flows = e.value.result.flows
    assert flows["finish"].null_count() == 1 and flows.height == 2
    assert e.value.result.write(tmp_path)


def test_tables_a_run_left_empty_still_have_text_columns():
    result = repsim.run(MICRO, lb="ecmp", collect="none")
    events = result.lb_events
    assert events.height == 0 and events.schema["lb"] == pl.String
    assert result.series.height == 0 and result.series.filter(pl.col("lb") == "ecmp").height == 0


def test_the_gil_is_released_while_simulating():
    ticks = 0
    done = threading.Event()

    def simulate():
        # About half a second on a 2-core machine: many 1 ms ticks even on a faster one.
        repsim.run(MICRO, set={"workload.flows[0].size": "64MiB"}, lb=["ops", "reps"])
        done.set()

    worker = threading.Thread(target=simulate)
    worker.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    # Python code ran all along (a held GIL would allow a tick only every 5 ms switch interval
    # at best, and none while the simulator holds it).
    assert ticks > 20


def test_ctrl_c_stops_a_run(ctrl_c):
    # Loaded first: only the call that simulates is timed.
    scenario = repsim.load("scenarios/permutation-1024.toml")
    timer = threading.Timer(0.5, _thread.interrupt_main)
    started = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        # One call of about 8 s on a 2-core machine (three load balancers), stopped in its
        # first: Ctrl-C that waited for the call to return would come far later.
        repsim.run(scenario)
    timer.cancel()
    assert 0.4 < time.monotonic() - started < 2
    # The package still works afterwards.
    assert repsim.run(MICRO, lb="reps").flows.height == 4
