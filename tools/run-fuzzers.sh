#!/usr/bin/env bash
# Runs every libFuzzer target in a fuzz build for a bounded time each; fails if any finds a crash.
# Usage: tools/run-fuzzers.sh BUILD_DIR SECONDS
set -euo pipefail
build_dir=${1:?build dir}
seconds=${2:-20}
src_dir=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

status=0
for target in "$build_dir"/tests/fuzz/*_fuzz; do
  [ -x "$target" ] || continue
  name=$(basename "$target")
  corpus="$work/$name"
  mkdir -p "$corpus"
  seeds="$src_dir/tests/fuzz/corpus/${name%_fuzz}"
  args=(-max_total_time="$seconds" -print_final_stats=0 -artifact_prefix="$work/$name-")
  dict="$src_dir/tests/fuzz/${name%_fuzz}.dict"
  [ -f "$dict" ] || dict="$src_dir/tests/fuzz/amf.dict"
  case "$name" in amf*|command*|session*|access*) args+=(-dict="$dict") ;; esac
  echo "== $name (${seconds}s)"
  dirs=("$corpus")
  [ -d "$seeds" ] && dirs+=("$seeds")
  if ! "$target" "${args[@]}" "${dirs[@]}" >"$work/$name.log" 2>&1; then
    echo "FAIL: $name" >&2
    tail -50 "$work/$name.log" >&2
    ls "$work"/"$name"-* 2>/dev/null | while read -r a; do echo "artifact: $a (hex: $(xxd -p "$a" | head -c 400))" >&2; done
    status=1
  else
    grep -E '^(#[0-9]+|Done)' "$work/$name.log" | tail -1 || true
  fi
done
exit $status
