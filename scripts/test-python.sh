#!/usr/bin/env bash
# The Python package's tests: builds and installs `repsim` (crates/python) into a virtual
# environment (REPSIM_VENV, default target/python-venv), then runs its pytest suite and executes
# the notebooks under examples/notebooks headless, once on one thread and once with runs split
# over two (REPSIM_THREADS=2). Needs python3 (3.9 or newer) with venv, a
# Rust toolchain, and the package index (pip) the first time.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${REPSIM_VENV:-target/python-venv}"
python="${PYTHON:-python3}"
if ! command -v "$python" >/dev/null 2>&1; then
    echo "error: $python not found; the Python package's tests need Python 3.9 or newer" >&2
    exit 1
fi
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 9))'; then
    echo "error: $python is $("$python" --version 2>&1); the Python package needs 3.9 or newer" >&2
    exit 1
fi
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
# The environment's tools (maturin, when pip builds without isolation) come first on PATH.
venv_bin="$(cd "$venv/bin" && pwd)"
export PATH="$venv_bin:$PATH"
py="$venv_bin/python"
echo "== Python package: install (pip install ./crates/python) into $venv"
"$py" -m pip install -q --disable-pip-version-check "maturin>=1.9.4,<2" "polars>=1.3" pytest \
    pandas pyarrow matplotlib nbclient nbformat ipykernel
# maturin is in the environment already: build with it rather than fetch it again.
"$py" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps \
    --no-build-isolation ./crates/python
# A kernel of this environment under its own name, so that no user-wide `python3` kernel
# (without the package) runs the notebooks.
"$py" -m ipykernel install --sys-prefix --name repsim-tests --display-name "repsim tests" >/dev/null
# The tests compare against the command built from this tree: REPSIM_BIN (scripts/test.sh
# passes the one its cargo test built), else built here.
if [ -z "${REPSIM_BIN:-}" ]; then
    cargo build --release -q -p repsim-cli
    REPSIM_BIN="$PWD/target/release/repsim"
fi
export REPSIM_BIN
# Everything once as it comes, then once more with every run and co-simulation split over two
# threads by default (REPSIM_THREADS; the command the tests compare with reads it too): the
# same results are expected.
for threads in 1 2; do
    export REPSIM_THREADS="$threads"
    echo "== Python package: pytest (REPSIM_THREADS=$threads)"
    "$py" -m pytest crates/python/tests -q
    echo "== Python package: notebooks (REPSIM_THREADS=$threads)"
    for nb in examples/notebooks/*.ipynb; do
        [ -e "$nb" ] || { echo "error: no notebook under examples/notebooks" >&2; exit 1; }
        echo "executing $nb"
        "$py" - "$nb" <<'PY'
import sys, time
import nbformat
from nbclient import NotebookClient

path = sys.argv[1]
nb = nbformat.read(path, as_version=4)
started = time.time()
# The kernel starts in the repository root, where the notebooks' scenario paths point.
NotebookClient(nb, timeout=600, kernel_name="repsim-tests", resources={"metadata": {"path": "."}}).execute()
print(f"{path}: {len(nb.cells)} cells executed in {time.time() - started:.1f} s")
PY
    done
done
unset REPSIM_THREADS
echo "== Python package: the Ray example, in-process (--local)"
"$py" examples/python/ray_sweep.py --local --out target/ray-sweep-local.csv
test -s target/ray-sweep-local.csv
