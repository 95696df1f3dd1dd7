"""Run a sweep's points on a Ray cluster, one remote task per point.

``repsim.sweep`` runs every point on the machine that calls it. When a sweep outgrows one
machine, this script spreads its points over a Ray cluster instead: each point (one value per
axis) becomes a ``ray.remote`` task that calls ``repsim.run`` on some worker and sends back the
summary rows. The rows are gathered into one polars frame, printed and written as CSV.

Try it anywhere, without Ray, running the points one after another in this process::

    python examples/python/ray_sweep.py --local

On this machine with Ray (``pip install "ray[default]"``), which starts a local Ray instance::

    python examples/python/ray_sweep.py

On a Ray cluster, either submit the script to a cluster started with ``ray up``::

    ray up cluster.yaml
    ray submit cluster.yaml examples/python/ray_sweep.py --scenario /abs/path/to/scenario.toml

or point the script at a running cluster (it then calls ``ray.init(address="auto")``)::

    RAY_ADDRESS=auto python examples/python/ray_sweep.py          # on the head node
    RAY_ADDRESS=ray://head:10001 python examples/python/ray_sweep.py

Every worker needs the ``repsim`` package installed (``pip install ./crates/python`` from the
repository, which builds it with maturin; or put it in the cluster's setup commands or runtime
environment) and the scenario files at the same path as on the machine that submits the
sweep, because tasks receive the scenario's absolute path, not its contents. The default
scenario path is relative to the repository root, so run from there or pass ``--scenario`` an
absolute path (``ray submit`` runs the script from the head node's home directory).

Without Ray, Slurm job arrays remain the command line's route to a cluster:
``repsim sweep FILE --emit slurm --out DIR`` writes one array task per point (see
docs/sweeps.md).
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from typing import Any, Dict, List, Optional, Sequence

import polars as pl

import repsim

SCENARIO = "scenarios/reps-micro-asymmetric.toml"

# The sweep: the cartesian product of these axes, one point per combination. Keys are the
# dotted scenario keys that `repsim run --set` takes; "seed" sets the run's seed.
AXES: Dict[str, List[Any]] = {
    "transport.evs_size": [2, 8, 32, 256, 65536],
    "seed": [1, 2, 3],
}
LBS = ["reps", "ops"]


def run_point(scenario_path: str, overrides: Dict[str, Any], lb: Sequence[str], seed: Optional[int]) -> List[Dict[str, Any]]:
    """Run one point of the sweep and return a row per load balancer: the point's overrides
    (and seed) followed by the summary columns of ``repsim.run``.

    This is a plain function so it can be called in-process; ``main`` wraps it with
    ``ray.remote`` only when Ray is used, so importing this module never needs Ray.
    """
    result = repsim.run(scenario_path, lb=list(lb), seed=seed, set=overrides)
    # The summary's own seed column is the seed that ran: the point's, or the scenario's when
    # the point sets none.
    return [{**overrides, **row} for row in result.summary.to_dicts()]


def points(axes: Dict[str, List[Any]]) -> List[Dict[str, Any]]:
    """Every combination of the axes' values, the first axis varying slowest."""
    keys = list(axes)
    return [dict(zip(keys, values)) for values in itertools.product(*(axes[k] for k in keys))]


def run_local(scenario: str, todo: List[Dict[str, Any]], lb: Sequence[str]) -> List[Dict[str, Any]]:
    rows: List[Dict[str, Any]] = []
    for i, p in enumerate(todo):
        overrides = {k: v for k, v in p.items() if k != "seed"}
        rows += run_point(scenario, overrides, lb, p.get("seed"))
        print(f"  point {i + 1}/{len(todo)} done: {p}", file=sys.stderr)
    return rows


def run_on_ray(ray: Any, scenario: str, todo: List[Dict[str, Any]], lb: Sequence[str]) -> List[Dict[str, Any]]:
    if os.environ.get("RAY_ADDRESS"):
        # ray.init takes the cluster's address from RAY_ADDRESS, which wins over "auto".
        ray.init(address="auto")
    else:
        # Joins a Ray started on this node with `ray start` (as on the head node under
        # `ray submit`), or else starts a local one.
        ray.init()
    # One CPU per task: a run is single-threaded (repsim.run's jobs=1), so Ray can pack as
    # many points on a node as it has cores.
    remote_point = ray.remote(num_cpus=1)(run_point)
    futures = []
    for p in todo:
        overrides = {k: v for k, v in p.items() if k != "seed"}
        futures.append(remote_point.remote(scenario, overrides, list(lb), p.get("seed")))
    rows: List[Dict[str, Any]] = []
    # ray.get keeps the submission order, so the rows come back in the points' order.
    for point_rows in ray.get(futures):
        rows += point_rows
    return rows


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", default=SCENARIO, help=f"scenario file (default {SCENARIO})")
    parser.add_argument("--lb", nargs="+", default=LBS, help=f"load balancers (default {' '.join(LBS)})")
    parser.add_argument("--out", default="results/sweeps/ray-sweep.csv", help="CSV file to write")
    parser.add_argument("--local", action="store_true", help="run the points in this process, without Ray")
    args = parser.parse_args(argv)

    # Workers do not share this process's working directory: hand them an absolute path.
    scenario = os.path.abspath(args.scenario)
    # Check the scenario here, before submitting anything, so a typo fails at once.
    repsim.load(scenario)
    todo = points(AXES)

    ray = None
    if not args.local:
        try:
            import ray
        except ImportError:
            print(
                'ray is not installed (pip install "ray[default]"); running the points here, '
                "one after another, as --local does",
                file=sys.stderr,
            )

    where = "on Ray" if ray is not None else "in this process"
    print(f"{len(todo)} points x {len(args.lb)} load balancers of {args.scenario}, {where}", file=sys.stderr)
    t0 = time.perf_counter()
    if ray is not None:
        rows = run_on_ray(ray, scenario, todo, args.lb)
    else:
        rows = run_local(scenario, todo, args.lb)
    print(f"done in {time.perf_counter() - t0:.1f} s", file=sys.stderr)

    frame = pl.DataFrame(rows)
    with pl.Config(tbl_rows=-1, tbl_cols=10, tbl_width_chars=160):
        print(frame.select(*AXES, "lb", "flows_completed", "fct_mean_us", "fct_p99_us", "fct_max_us", "trims"))
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    frame.write_csv(args.out)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
