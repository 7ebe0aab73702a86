"""Paired, interleaved whole-process timing: for each case, each round runs cdkbot and the
reference back to back (alternating which goes first), so both see the same machine; the ratio
is taken run by run, and min / median / max are of those ratios.

Usage: python3 paired.py CASES.json ROUNDS > RESULTS.json
CASES.json: [{"name": ..., "group": ..., "ours": [argv], "ref": [argv]}, ...]
RESULTS.json: one object per case with per-run wall ms and peak RSS KiB of both sides (wait4).
"""
import json
import os
import subprocess
import sys
import time


def run(argv):
    start = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = (time.perf_counter() - start) * 1000
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit(f"{argv} exited {code}")
    return wall, ru.ru_maxrss


cases = json.load(open(sys.argv[1]))
rounds = int(sys.argv[2])
results = {c["name"]: {"name": c["name"], "group": c.get("group", ""), "ours": [], "ref": []} for c in cases}
for r in range(rounds):
    for c in cases:
        order = ("ours", "ref") if r % 2 == 0 else ("ref", "ours")
        for side in order:
            if c.get(side):
                results[c["name"]][side].append(run(c[side]))
json.dump(list(results.values()), sys.stdout)
