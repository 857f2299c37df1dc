#!/usr/bin/env bash
# The long fuzz campaign (make fuzz-long): every libFuzzer target of a build gets SECONDS of CPU
# time (not wall time: a target sharing the machine runs longer until it has had them), from its
# seed corpus, under the build's ASan and UBSan. Then:
#   - what it found is merged with the seeds (-merge=1: only inputs that add edges); with
#     --keep-corpus the added inputs go into tests/fuzz/corpus/<target>/ when they are small
#     (at most KEEP_KIB, default 256 KiB, and KEEP_FILES, default 300, per target), so CI's
#     replay starts from them;
#   - a crash, leak or timeout is kept in OUT/findings/ and named in the report: turn it into a
#     seed (tests/fuzz/corpus/<target>/) once fixed, so that every CI run replays it;
#   - OUT/report.md gets one table row per target: CPU and wall seconds, executions, coverage
#     (libFuzzer's cov and ft at the end), corpus sizes and findings (docs/testing.md keeps them).
#
#   tools/fuzz-long.sh [--keep-corpus] SECONDS BUILD_DIR [TARGET...]
# JOBS targets at a time (default: the number of cores); OUT defaults to BUILD_DIR/fuzz-long.
set -euo pipefail
usage() { echo "usage: tools/fuzz-long.sh [--keep-corpus] SECONDS BUILD_DIR [TARGET...]" >&2; exit 2; }
keep=0
if [ "${1:-}" = --keep-corpus ]; then keep=1; shift; fi
[ $# -ge 2 ] || usage
seconds=$1 build_dir=$2
shift 2
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -gt 0 ] || usage
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
keep_kib=${KEEP_KIB:-256}
keep_files=${KEEP_FILES:-300}
src_dir=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tools/fuzz-lib.sh
. "$src_dir/tools/fuzz-lib.sh"
out=${OUT:-$build_dir/fuzz-long}
mkdir -p "$out/findings"

targets=()
if [ $# -gt 0 ]; then
  for name in "$@"; do targets+=("$build_dir/tests/fuzz/${name%_fuzz}_fuzz"); done
else
  mapfile -t targets < <(fuzz_targets "$build_dir")
fi
[ ${#targets[@]} -gt 0 ] || { echo "no fuzz targets in $build_dir/tests/fuzz" >&2; exit 1; }

# The last status line libFuzzer printed ("#123 ... cov: 456 ft: 789 corp: 12/3456b ...").
last_status() { grep -E '^#[0-9]+' "$1" | tail -1 || true; }
field() { sed -nE "s/.* $1: ([0-9]+).*/\1/p" <<<"$2"; }

# One target: runs until it has had $seconds of CPU, then merges; writes OUT/<name>.row.
campaign() {
  local target=$1 name seeds scratch cpu=0 wall=0 execs=0 runs=0 finding="none" rc
  name=$(basename "$target")
  seeds="$src_dir/tests/fuzz/corpus/${name%_fuzz}"
  scratch="$out/$name.corpus"
  mkdir -p "$scratch"
  while [ "$cpu" -lt "$seconds" ]; do
    runs=$((runs + 1))
    local log="$out/$name.$runs.log" started
    started=$(date +%s)
    rc=0
    # shellcheck disable=SC2046
    /usr/bin/time -f "%U %S" -o "$out/$name.time" "$target" $(fuzz_args "$src_dir" "$name") \
      -print_final_stats=1 -timeout=60 -artifact_prefix="$out/findings/$name-" \
      -max_total_time=$((seconds - cpu)) "$scratch" "$seeds" >"$log" 2>&1 || rc=$?
    wall=$((wall + $(date +%s) - started))
    # The time file's last line: user and system seconds.
    cpu=$((cpu + $(tail -1 "$out/$name.time" | awk '{printf "%d", $1 + $2 + 0.5}')))
    execs=$((execs + $(sed -nE 's/^stat::number_of_executed_units: ([0-9]+)/\1/p' "$log" | tail -1 | grep . || echo 0)))
    if [ "$rc" -ne 0 ]; then
      finding="**$(grep -m1 -oE 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer): [a-z-]+|runtime error: .{0,80}|ERROR: libFuzzer: timeout' "$log" || echo "exit $rc")** ($(cd "$out/findings" && ls -- "$name-"* 2>/dev/null | tr '\n' ' ' || true))"
      echo "FAIL: $name: $finding; log $log" >&2
      break
    fi
    # A run that ends early without a finding would loop for ever.
    [ "$(tail -1 "$out/$name.time" | awk '{print ($1 + $2 < 1)}')" = 0 ] || break
  done
  local status cov ft before merged added added_kib kept="no"
  status=$(last_status "$out/$name.$runs.log")
  cov=$(field cov "$status")
  ft=$(field ft "$status")
  before=$(find "$seeds" -type f | wc -l)
  # The seeds plus what adds coverage to them: a copy, so the repository changes only on --keep-corpus.
  rm -rf "$out/$name.merged" && cp -r "$seeds" "$out/$name.merged"
  # Edges only (-use_counters=0): the hit counts' features would keep hundreds of inputs more.
  "$target" -merge=1 -use_counters=0 "$out/$name.merged" "$scratch" >"$out/$name.merge.log" 2>&1 || true
  merged=$(find "$out/$name.merged" -type f | wc -l)
  added=$((merged - before))
  added_kib=$(comm -13 <(ls "$seeds" | sort) <(ls "$out/$name.merged" | sort) |
    (cd "$out/$name.merged" && xargs -r cat | wc -c) | awk '{printf "%d", ($1 + 1023) / 1024}')
  if [ "$keep" = 1 ] && [ "$added" -gt 0 ] && [ "$added_kib" -le "$keep_kib" ] && [ "$added" -le "$keep_files" ]; then
    comm -13 <(ls "$seeds" | sort) <(ls "$out/$name.merged" | sort) |
      while read -r f; do cp "$out/$name.merged/$f" "$seeds/$f"; done
    kept="yes"
  fi
  printf '| `%s` | %d | %d | %d | %d | %s | %s | %d → %d (+%d KiB, kept: %s) | %s |\n' \
    "${name%_fuzz}" "$cpu" "$wall" "$execs" "$runs" "${cov:-?}" "${ft:-?}" "$before" "$merged" "$added_kib" \
    "$kept" "$finding" >"$out/$name.row"
  echo "== $name: $cpu CPU-s, $execs executions, cov ${cov:-?} ft ${ft:-?}, corpus $before -> $merged, $finding"
  [ "$finding" = none ]
}

echo "fuzzing ${#targets[@]} targets for ${seconds} CPU-s each, $jobs at a time; results in $out"
status=0
for_each "$jobs" campaign "${targets[@]}" || status=1
{
  echo "| target | CPU s | wall s | executions | runs | cov | ft | corpus: seeds → merged | findings |"
  echo "|---|---:|---:|---:|---:|---:|---:|---|---|"
  for t in "${targets[@]}"; do
    n=$(basename "$t")
    cat "$out/$n.row" 2>/dev/null || echo "| \`${n%_fuzz}\` | not run |"
  done
} >"$out/report.md"
cat "$out/report.md"
exit $status
