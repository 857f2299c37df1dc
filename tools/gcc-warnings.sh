#!/usr/bin/env bash
# gcc's warnings, as errors, on every source file of a build that clang compiles (make gcc-warnings).
# The sanitizer build is clang's (libFuzzer needs it), while the release build and `make run` use
# gcc: this pass keeps gcc's front-end warnings from the code they build. It reads the build's
# compile_commands.json and compiles each file with g++ and its own flags, less the sanitizer ones,
# at -O0 without debug info into BUILD_DIR/gcc-warnings/, through ccache when it is installed (so
# an unchanged file costs a cache hit; a file with a warning is never cached and always fails).
# Left out: generated files, and tests/ (only the sanitizer build compiles the tests, with clang's
# -Werror; they were a third of this pass's time).
# Usage: tools/gcc-warnings.sh BUILD_DIR   (JOBS parallel compiles, default the number of cores)
set -euo pipefail
build_dir=${1:?usage: tools/gcc-warnings.sh BUILD_DIR}
src_dir=$(cd "$(dirname "$0")/.." && pwd)
exec /usr/bin/python3 - "$build_dir" "${JOBS:-$(nproc 2>/dev/null || echo 2)}" "$src_dir" <<'PY'
import concurrent.futures
import json
import os
import shlex
import shutil
import subprocess
import sys

build_dir, jobs, src_dir = os.path.abspath(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
entries = json.load(open(os.path.join(build_dir, "compile_commands.json")))
out_dir = os.path.join(build_dir, "gcc-warnings")
# clang-only flags, the sanitizer instrumentation that changes nothing in what gcc checks, and the
# optimisation and debug levels (-O0 -g0 is the cheapest compile that still runs gcc's front end).
DROP_PREFIXES = ("-fsanitize", "-fno-sanitize", "-fuse-ld=", "-fcolor-diagnostics", "-O", "-g")
# The same ccache settings as the build's (CMakeLists.txt): a clone in another folder hits too.
ccache = shutil.which("ccache")
env = dict(os.environ, CCACHE_BASEDIR=src_dir, CCACHE_NOHASHDIR="true")


def gcc_command(entry, index=0):
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    compiler = "gcc" if entry["file"].endswith(".c") else "g++"
    out, skip = ([ccache] if ccache else []) + [compiler], False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if a == "-c" or a.startswith(DROP_PREFIXES):
            continue
        out.append(a)
    return out + ["-O0", "-g0", "-Werror", "-c", "-o", os.path.join(out_dir, f"{index}.o")]


def check(item):
    index, entry = item
    p = subprocess.run(gcc_command(entry, index), cwd=entry["directory"], capture_output=True, text=True, env=env)
    return entry["file"], p.returncode, p.stdout + p.stderr


tests_dir = os.path.join(src_dir, "tests") + os.sep
files = [e for e in entries
         if not os.path.abspath(e["file"]).startswith((build_dir + os.sep, tests_dir))]
seen, unique = set(), []
for e in files:  # a file compiled into two targets with the same flags is checked once
    key = (e["file"], tuple(gcc_command(e)))
    if key not in seen:
        seen.add(key)
        unique.append(e)
os.makedirs(out_dir, exist_ok=True)
failed = 0
with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
    for path, code, output in pool.map(check, enumerate(unique)):
        if code != 0:
            failed += 1
            print(f"gcc warnings: {path}\n{output}", flush=True)
print(f"gcc -O0 -Werror: {len(unique) - failed} of {len(unique)} files clean")
sys.exit(1 if failed else 0)
PY
