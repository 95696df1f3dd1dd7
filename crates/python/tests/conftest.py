"""Shared set-up of the Python package's tests: they run from the repository root (scenario
paths are relative to it) and compare against the `repsim` command built from the same tree."""

import os
import pathlib
import signal
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]

#: A 16-host two-tier fat tree (4 hosts per ToR, 400G, 1 us links) running REPS; tests append
#: their workload.
FABRIC = """
name = "cosim"
lb = "reps"
[topology]
type = "fat_tree"
tiers = 2
hosts = 16
hosts_per_tor = 4
link_speed = "400Gbps"
link_latency = "1us"
switch_latency = "0ns"
"""


@pytest.fixture(autouse=True)
def at_repository_root(monkeypatch):
    monkeypatch.chdir(ROOT)


@pytest.fixture
def ctrl_c():
    """Ctrl-C raises KeyboardInterrupt during the test, however the suite was started: a
    shell that starts it in the background (`cmd &`) has SIGINT ignored, and then Python
    installs no handler and `_thread.interrupt_main()` does nothing."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


@pytest.fixture(scope="session")
def cli() -> pathlib.Path:
    """The `repsim` binary of this tree (`REPSIM_BIN`, else target/release/repsim, built if
    missing). A missing binary fails the test rather than skipping it."""
    given = os.environ.get("REPSIM_BIN")
    binary = pathlib.Path(given) if given else ROOT / "target" / "release" / "repsim"
    if not binary.exists():
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "repsim-cli"], cwd=ROOT, check=True)
    assert binary.exists(), f"no repsim binary at {binary}"
    return binary
