"""Speed of the Python package against the command (docs/performance.md, "From Python").

1. A 1,024-host permutation (scenarios/permutation-1024.toml, REPS): `repsim run` as a process
   (start to exit: load, simulate, write the files) against `repsim.run(...)` plus its `flows`
   and `summary` frames in this process, interleaved, median of N each.
2. Data frames for a million flows: a co-simulation injects 1,000,000 one-packet flows
   (external workload, 128-host fat tree), runs them, and `Simulation.flows()` is timed (the
   simulator's flow records, the Arrow table and the polars frame).
3. `Result.flows` of a run of as many flows: `scenarios/websearch-128.toml` with the Google RPC
   flow sizes and `workload.count` flows, REPS.

Run from the repository root after `pip install ./crates/python` and
`cargo build --release`:  python crates/python/bench/bench.py [--repeat 3]
"""

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import repsim

ROOT = pathlib.Path(__file__).resolve().parents[3]
PERMUTATION = "scenarios/permutation-1024.toml"
FABRIC = """
name = "million-flows"
lb = "reps"
end = "10s"
[topology]
type = "fat_tree"
tiers = 2
hosts = 128
hosts_per_tor = 8
link_speed = "400Gbps"
[workload]
type = "external"
"""


def permutation(repeat: int, binary: pathlib.Path) -> None:
    cli, py = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeat):
            started = time.perf_counter()
            subprocess.run(
                [binary, "run", PERMUTATION, "--lb", "reps", "--quiet", "--out", f"{tmp}/cli{i}"], check=True
            )
            cli.append(time.perf_counter() - started)
            started = time.perf_counter()
            result = repsim.run(PERMUTATION, lb="reps")
            _ = result.flows, result.summary
            py.append(time.perf_counter() - started)
            print(f"  round {i + 1}: command {cli[-1]:.3f} s, Python {py[-1]:.3f} s", flush=True)
    c, p = statistics.median(cli), statistics.median(py)
    print(f"1,024-host permutation (REPS): command {c:.3f} s, Python {p:.3f} s (median of {repeat}); "
          f"Python / command = {p / c:.3f}")


def million_flows(n: int) -> None:
    sim = repsim.Simulation(FABRIC)
    started = time.perf_counter()
    for i in range(n):
        src = i % 128
        sim.inject(src, (src + 64) % 128, 4000, start=i * 20 * repsim.NS)
    injected = time.perf_counter() - started
    started = time.perf_counter()
    sim.run()
    simulated = time.perf_counter() - started
    started = time.perf_counter()
    frame = sim.flows()
    framed = time.perf_counter() - started
    assert frame.height == n and frame["fct_us"].null_count() == 0, frame
    print(f"{n:,} flows: injected in {injected:.2f} s, simulated in {simulated:.2f} s, "
          f"Simulation.flows() frame in {framed:.3f} s")


def result_flows(n: int) -> None:
    scenario = repsim.load(
        "scenarios/websearch-128.toml",
        set={"workload.cdf": "../data/cdf/GoogleRPC2008.txt", "workload.count": n, "workload.load": 0.5,
             "lb": ["reps"], "end": "10s"},
    )
    started = time.perf_counter()
    result = repsim.run(scenario)
    ran = time.perf_counter() - started
    started = time.perf_counter()
    frame = result.flows
    framed = time.perf_counter() - started
    assert frame.height == n, frame
    print(f"{n:,} flows in a run: simulated in {ran:.2f} s, Result.flows frame in {framed:.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--flows", type=int, default=1_000_000)
    parser.add_argument("--bin", default=os.environ.get("REPSIM_BIN", str(ROOT / "target/release/repsim")))
    args = parser.parse_args()
    os.chdir(ROOT)
    started = time.perf_counter()
    import polars  # noqa: F401  (timed: the first frame imports it anyway)
    print(f"python {sys.version.split()[0]}, polars {polars.__version__}, repsim {repsim.__version__}")
    permutation(args.repeat, pathlib.Path(args.bin))
    million_flows(args.flows)
    result_flows(args.flows)


if __name__ == "__main__":
    main()
