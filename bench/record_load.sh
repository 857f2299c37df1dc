#!/usr/bin/env bash
# Recording under load (docs/benchmarks.md, "Recording"): STREAMS publishers at about 2.5 Mb/s
# (sluice-bench publish), PLAYERS players spread over them (sluice-bench play), once with the app
# recording every stream and once without, alternating, ROUNDS times. While the players play, the
# page cache is dropped every second (echo 1 > /proc/sys/vm/drop_caches, root only) so that the
# recordings' writes really go to the disk. Reports per run and as medians: server CPU-s per GB
# delivered, loop lag p50/p99/max of the loop (sluice_loop_lag_seconds, the last minute),
# RSS, bytes recorded, players' stalls.
#
# Usage: bench/record_load.sh [STREAMS] [PLAYERS] [SECONDS] [ROUNDS]   (defaults: 20 1000 30 2)
set -euo pipefail
streams=${1:-20}
players=${2:-1000}
seconds=${3:-30}
rounds=${4:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
make -C "$root" release >/dev/null
build="$root/build/release"
work=$(mktemp -d /tmp/sluice-bench-rec-XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

media="$work/media.flv"
bench_make_media "$media" 20 2400k
drop_caches() { [ -w /proc/sys/vm/drop_caches ] && sync -f "$work" && echo 1 > /proc/sys/vm/drop_caches || true; }

run() {  # run MODE(off|on) ROUND
  local mode=$1 round=$2 port hport dir="$work/$1-$2"
  mkdir -p "$dir/rec"
  port=$(bench_free_port); hport=$(bench_free_port)
  local record="{ mode: off }"
  [ "$mode" = on ] && record="{ dir: $dir/rec }"
  cat > "$dir/sluice.yaml" <<YAML
rtmp: { listen: 127.0.0.1:$port, chunk_size: 4096 }
http: { listen: 127.0.0.1:$hport }
apps:
  live: { type: live, record: $record }
log: { level: warn }
YAML
  "$build/server/sluice" --config "$dir/sluice.yaml" >"$dir/server.log" 2>&1 &
  local server=$!; pids+=("$server")
  bench_wait_port "$port"
  "$build/bench/load/sluice-bench" publish -n "$streams" --rate 50 -d $(( seconds + 15 )) -q -f "$media" \
    "rtmp://127.0.0.1:$port/live/s{i}" >"$dir/publish.txt" 2>&1 &
  local pub=$!; pids+=("$pub")
  sleep 4
  local urls=() i
  for (( i = 0; i < streams; i++ )); do urls+=("rtmp://127.0.0.1:$port/live/s$i"); done
  local rss0 cpu0 cpu1 peak r
  rss0=$(bench_rss "$server"); cpu0=$(bench_cpu_ticks "$server"); peak=$rss0
  "$build/bench/load/sluice-bench" play -n "$players" --rate 250 -d "$seconds" -q --json "$dir/play.json" \
    "${urls[@]}" >"$dir/play.txt" 2>&1 &
  local bench=$!; pids+=("$bench")
  while kill -0 "$bench" 2>/dev/null; do
    drop_caches
    r=$(bench_rss "$server"); [ "$r" -gt "$peak" ] && peak=$r
    sleep 1
  done
  wait "$bench" || true
  cpu1=$(bench_cpu_ticks "$server")
  curl -s "http://127.0.0.1:$hport/metrics" > "$dir/metrics.txt"
  kill "$pub" 2>/dev/null || true; wait "$pub" 2>/dev/null || true
  kill -TERM "$server"; wait "$server" 2>/dev/null || true
  local recorded
  recorded=$(du -sb --apparent-size "$dir/rec" | cut -f1)
  python3 - "$dir" "$mode" "$round" "$(( cpu1 - cpu0 ))" "$(getconf CLK_TCK)" "$rss0" "$peak" "$recorded" \
    >> "$work/runs.jsonl" <<'PY'
import json, re, sys
d, mode, rnd, ticks, hz, rss0, peak, recorded = sys.argv[1:]
p = json.load(open(f"{d}/play.json"))["players"]
m = open(f"{d}/metrics.txt").read()
lag = {q: float(re.search(r'sluice_loop_lag_seconds\{quantile="%s"\} (\S+)' % q, m).group(1)) * 1000
       for q in ("0.5", "0.99", "1")}
cpu = int(ticks) / int(hz)
print(json.dumps({"mode": mode, "round": int(rnd), "cpu_s": cpu, "gb": p["bytes_in"] / 1e9,
                  "cpu_per_gb": cpu / (p["bytes_in"] / 1e9), "ok": p["ok"], "failed": p["failed"],
                  "stalls": p["stalls"], "lag_ms": lag, "rss0_mb": int(rss0) / 1024, "peak_mb": int(peak) / 1024,
                  "recorded_mb": int(recorded) / 1e6}))
PY
  tail -1 "$work/runs.jsonl"
}

for (( round = 1; round <= rounds; round++ )); do
  run off "$round"
  run on "$round"
done
python3 - "$work/runs.jsonl" "$streams" "$players" "$seconds" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
print(f"\n{sys.argv[2]} streams at ~2.5 Mb/s, {sys.argv[3]} players, {sys.argv[4]} s per run, page cache dropped every second")
print("| recording | CPU-s/GB (runs) | median | loop lag p50 / p99 / max ms (median) | peak RSS MB | recorded MB | stalls | failed |")
print("|---|---|---:|---|---:|---:|---:|---:|")
med = {}
for mode in ("off", "on"):
    rs = [r for r in runs if r["mode"] == mode]
    med[mode] = statistics.median(r["cpu_per_gb"] for r in rs)
    lag = [statistics.median(r["lag_ms"][q] for r in rs) for q in ("0.5", "0.99", "1")]
    each = " / ".join("%.3f" % r["cpu_per_gb"] for r in rs)
    print(f"| {mode} | {each} | {med[mode]:.3f} | "
          f"{lag[0]:.2f} / {lag[1]:.2f} / {lag[2]:.2f} | {statistics.median(r['peak_mb'] for r in rs):.1f} | "
          f"{statistics.median(r['recorded_mb'] for r in rs):.0f} | {sum(r['stalls'] for r in rs)} | {sum(r['failed'] for r in rs)} |")
print(f"\nrecording on / off, CPU-s per GB delivered: {med['on'] / med['off']:.3f}x")
PY
