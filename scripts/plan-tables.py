#!/usr/bin/env python3
"""Markdown tables of `repsim validate-plan --against` outputs, as docs/fidelity.md shows them.

Usage: scripts/plan-tables.py OUTPUT.txt...   (each the saved output of one plan run with -j 2)
"""
import re
import sys


def table(path):
    text = open(path).read()
    numbers = {}
    for m in re.finditer(r"^\[\d+/\d+\] (\d+) \((.*)\): ([\d.]+) s$", text, re.M):
        numbers.setdefault(m.group(2), []).append((int(m.group(1)), m.group(3)))
    blocks = re.split(r"^Experiment: ", text, flags=re.M)[1:]
    rows = []
    for b in blocks:
        name = b.split("\n", 1)[0].strip()
        num, _ = numbers[name].pop(0)
        wall = re.search(r"^wall time ([\d.]+) s", b, re.M).group(1)
        q = {}
        for m in re.finditer(r"^  (tail FCT \(us\)|min FCT \(us\)|Rtx|ACKs|NACKs|connections|New)\s+(\S+)\s+(\S+)\s+(.+?)\s+(yes|NO|-)$", b, re.M):
            q[m.group(1)] = (m.group(2), m.group(3), m.group(5))
        verdicts = " ".join(re.findall(r"^\[(PASS|FAIL)\]", b, re.M))
        differs = re.search(r"verdict differs: (.*)$", b, re.M)
        verdicts += f" (ref differs: {differs.group(1)})" if differs else " (= ref)"
        agrees = all(v[2] != "NO" for v in q.values()) and not differs

        def cell(k):
            ours, ref, ok = q[k]
            return f"{ours} / {ref}" + (" **x**" if ok == "NO" else "")

        rows.append((num, f"| {num} | {name} | {cell('tail FCT (us)')} | {cell('min FCT (us)')} | {cell('Rtx')} | {cell('ACKs')} | {verdicts} | {wall} | {'yes' if agrees else 'no'} |", agrees))
    rows.sort()
    total = re.search(r"^(\d+) experiments in ([\d.]+) s", text, re.M)
    ok = sum(1 for r in rows if r[2])
    print(f"{ok} of {len(rows)} experiments within tolerance; the plan took {total.group(2)} s with `-j 2` on the 2 cores. **x** marks a number outside tolerance.\n")
    print("| # | experiment | tail FCT us, ours / ref | first finish us, ours / ref | Rtx ours / ref | ACKs ours / ref | our verdicts | wall s | agrees |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(r[1])
    print()


for p in sys.argv[1:]:
    print(f"<!-- {p} -->")
    table(p)
