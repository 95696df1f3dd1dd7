"""The README's Python one-liner, run as a newcomer would: it prints the flow completion times
(polars elides the middle columns of a wide frame, so the line selects the ones it shows)."""

import re
import subprocess
import sys

from conftest import ROOT


def readme_one_liner() -> str:
    text = (ROOT / "README.md").read_text()
    match = re.search(r'^python -c "(.+)"$', text, re.MULTILINE)
    assert match, "the README has a `python -c` line"
    return match.group(1)


def test_the_readme_one_liner_prints_the_fcts():
    code = readme_one_liner()
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    for column in ("lb", "fct_mean_us", "fct_p99_us", "fct_max_us"):
        assert column in out, out
    assert "…" not in out, f"columns elided:\n{out}"
    for lb in ("reps", "ops", "ecmp"):
        assert re.search(rf"│ {lb}\s", out), out
