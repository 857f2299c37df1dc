#!/usr/bin/env bash
# Runs every libFuzzer target of a build (BUILD_DIR/tests/fuzz/*_fuzz); fails if any finds a crash.
#   tools/run-fuzzers.sh --budget SECONDS BUILD_DIR   CI's smoke run: first every target replays its
#       whole seed corpus (tests/fuzz/corpus/<name>), then the targets share SECONDS of fuzzing
#       evenly (each gets SECONDS / targets), JOBS at a time (so the wall time is SECONDS / JOBS).
#   tools/run-fuzzers.sh --each SECONDS BUILD_DIR     SECONDS of fuzzing for every target (a quick
#       look; make fuzz-long is tools/fuzz-long.sh, which counts CPU time and keeps the results).
# JOBS defaults to the number of cores. A crash prints the log's tail and the input in hex.
set -euo pipefail
usage() { echo "usage: tools/run-fuzzers.sh --budget SECONDS | --each SECONDS  BUILD_DIR" >&2; exit 2; }
[ $# -eq 3 ] || usage
mode=$1 amount=$2 build_dir=$3
case "$mode" in --budget | --each) ;; *) usage ;; esac
[[ "$amount" =~ ^[0-9]+$ ]] && [ "$amount" -gt 0 ] || usage
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
src_dir=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# shellcheck source=tools/fuzz-lib.sh
. "$src_dir/tools/fuzz-lib.sh"
mapfile -t targets < <(fuzz_targets "$build_dir")
if [ ${#targets[@]} -eq 0 ]; then
  echo "no fuzz targets in $build_dir/tests/fuzz (configure with -DSLUICE_FUZZ=ON)" >&2
  exit 1
fi
if [ "$mode" = --budget ]; then
  seconds=$(( amount / ${#targets[@]} ))
  [ "$seconds" -ge 1 ] || seconds=1
else
  seconds=$amount
fi

# The arguments every run of target $1 takes (dictionary, where it is not found, and artifacts).
fuzz_args_here() {
  echo "-print_final_stats=0 -artifact_prefix=$work/$1- $(fuzz_args "$src_dir" "$1")"
}

report_failure() {
  local name=$1 log=$2
  echo "FAIL: $name" >&2
  tail -50 "$log" >&2
  for a in "$work/$name"-*; do
    [ -e "$a" ] && echo "artifact: $a (hex: $(xxd -p "$a" | head -c 400))" >&2
  done
  return 0
}

# Replays the seed corpus: every seed is run once, so a seed that crashes today fails at once.
replay() {
  local target=$1 name seeds
  name=$(basename "$target")
  seeds="$src_dir/tests/fuzz/corpus/${name%_fuzz}"
  if [ ! -d "$seeds" ] || [ -z "$(ls -A "$seeds")" ]; then
    echo "FAIL: $name has no seed corpus in tests/fuzz/corpus/${name%_fuzz}" >&2
    return 1
  fi
  # shellcheck disable=SC2046
  if ! "$target" $(fuzz_args_here "$name") -runs=0 "$seeds" >"$work/$name.replay.log" 2>&1; then
    report_failure "$name" "$work/$name.replay.log"
    return 1
  fi
  echo "== $name: replayed $(find "$seeds" -type f | wc -l) seeds"
}

# Fuzzes for $seconds, from the seeds, into a scratch corpus (the committed corpus is never written).
fuzz() {
  local target=$1 name
  name=$(basename "$target")
  mkdir -p "$work/$name.corpus"
  # shellcheck disable=SC2046
  if ! "$target" $(fuzz_args_here "$name") -max_total_time="$seconds" "$work/$name.corpus" \
      "$src_dir/tests/fuzz/corpus/${name%_fuzz}" >"$work/$name.log" 2>&1; then
    report_failure "$name" "$work/$name.log"
    return 1
  fi
  echo "== $name (${seconds}s): $(grep -E '^(#[0-9]+|Done)' "$work/$name.log" | tail -1 || true)"
}

status=0
if [ "$mode" = --budget ]; then
  for_each "$jobs" replay "${targets[@]}" || status=1
fi
echo "fuzzing ${#targets[@]} targets for ${seconds}s each, $jobs at a time"
for_each "$jobs" fuzz "${targets[@]}" || status=1
exit $status
