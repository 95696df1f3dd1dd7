#!/usr/bin/env bash
# The whole test suite, as the README gives it: the Rust workspace's tests
# (`cargo test --workspace --release`), then the Python package's (scripts/test-python.sh:
# pytest and the notebook, in a virtual environment under target/). Arguments go to cargo test.
set -euo pipefail
cd "$(dirname "$0")/.."
# Runs go on one thread unless a test asks for more (REPSIM_THREADS; unset, a run takes the
# machine's cores): the suite runs several at once, and the threads tests ask for every count.
export REPSIM_THREADS="${REPSIM_THREADS:-1}"
cargo test --workspace --release "$@"
# The command's integration tests built target/release/repsim from this tree.
REPSIM_BIN="$PWD/target/release/repsim" scripts/test-python.sh
