#!/usr/bin/env bash
# Where the time of a CI run (or of any `ctest` run) went, from what it printed:
#   bash .ci/run 2>&1 | tee ci.log;  tools/ci-times.sh ci.log [N]
# prints the phases (.ci/run's `ci-phase:` lines), then the N slowest tests (default 15) from
# CTest's result lines, and the tests' totals by kind. docs/testing.md keeps the table this makes.
set -euo pipefail
log=${1:?usage: tools/ci-times.sh LOG [N]}
top=${2:-15}
exec /usr/bin/python3 - "$log" "$top" <<'PY'
import re
import sys

text = open(sys.argv[1], errors="replace").read()
top = int(sys.argv[2])
phases = re.findall(r"^ci-phase: (\S+) (\d+)$", text, re.M)
if phases:
    print("| phase | seconds |\n|---|---:|")
    for name, s in phases:
        print(f"| {name} | {s} |")
    print(f"| **total** | **{sum(int(s) for _, s in phases)}** |\n")
tests = re.findall(r"Test\s+#\d+: (\S+) \.*\s*(?:\*\*\*)?(\w[\w ]*?)\s+([\d.]+) sec", text)
if not tests:
    sys.exit(0)
print(f"| slowest tests ({len(tests)} in all) | result | seconds |\n|---|---|---:|")
for name, result, s in sorted(tests, key=lambda t: -float(t[2]))[:top]:
    print(f"| {name} | {result} | {float(s):.1f} |")
kinds = {}
for name, _, s in tests:
    kind = name.split(".", 1)[0]
    kinds[kind] = kinds.get(kind, 0.0) + float(s)
print("\n| kind | tests | summed seconds |\n|---|---:|---:|")
for kind, total in sorted(kinds.items()):
    print(f"| {kind} | {sum(1 for n, _, _ in tests if n.split('.', 1)[0] == kind)} | {total:.0f} |")
wall = re.search(r"Total Test time \(real\) =\s+([\d.]+) sec", text)
if wall:
    print(f"\nCTest's wall time: {float(wall.group(1)):.0f} s")
PY
