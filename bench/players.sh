#!/usr/bin/env bash
# Player figures for a release build of Sluice on loopback, with N players in one sluice-bench
# process: live (one ffmpeg publisher, N players of its stream) or vod (N players of one FLV file,
# paced in real time). Prints server CPU seconds, CPU-s per GB delivered, peak RSS and RSS per
# player, bytes per player, and the bench's summary (TTFF, stalls, failures).
#
# Usage: bench/players.sh live|vod [PLAYERS] [SECONDS] [VIDEO_BITRATE]   (defaults: 500 30 2400k)
# Every run is bounded: SECONDS of playing plus a few seconds of set-up.
set -euo pipefail
mode=${1:-live}
players=${2:-500}
seconds=${3:-30}
bitrate=${4:-2400k}
case "$mode" in live|vod) ;; *) echo "usage: $0 live|vod [PLAYERS] [SECONDS] [VIDEO_BITRATE]" >&2; exit 2 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
make -C "$root" release >/dev/null
build="$root/build/release"
work=$(mktemp -d /tmp/sluice-bench-XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

mkdir -p "$work/media"
media="$work/media/movie.flv"
length=$(( seconds + 30 ))
bench_make_media "$media" "$length" "$bitrate"
port=$(bench_free_port)
bench_sluice_config "$work/sluice.yaml" "$port" "$work/media"
"$build/server/sluice" --config "$work/sluice.yaml" >"$work/server.log" 2>&1 &
server=$!; pids+=("$server")
bench_wait_port "$port"
if [ "$mode" = live ]; then
  bench_publish "$media" "rtmp://127.0.0.1:$port/live/bench" /dev/null
  pids+=("$!")
  url="rtmp://127.0.0.1:$port/live/bench"
  start=()
  sleep 3
else
  url="rtmp://127.0.0.1:$port/vod/movie.flv"
  start=(--start 0)
fi
cpu() { bench_cpu_ticks "$server"; }
rss() { bench_rss "$server"; }
ticks=$(getconf CLK_TCK)
idle_rss=$(rss)
cpu0=$(cpu)
peak=$idle_rss
"$build/bench/load/sluice-bench" play -n "$players" --rate 250 -d "$seconds" -q --json "$work/bench.json" \
  "${start[@]}" "$url" >"$work/bench.txt" &
bench=$!; pids+=("$bench")
while kill -0 "$bench" 2>/dev/null; do
  r=$(rss); [ "$r" -gt "$peak" ] && peak=$r
  sleep 0.5
done
wait "$bench" || true
cpu1=$(cpu)
python3 - "$work/bench.json" "$players" "$seconds" "$bitrate" "$(( cpu1 - cpu0 ))" "$ticks" "$idle_rss" "$peak" "$mode" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
players, seconds, bitrate, mode = int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[9]
cpu = int(sys.argv[5]) / int(sys.argv[6])
idle, peak = int(sys.argv[7]), int(sys.argv[8])
p = summary["players"]
gb = p["bytes_in"] / 1e9
print(f"{mode}: {players} players x {seconds:.0f} s of a {bitrate} H.264 + 128k AAC stream")
print(f"  players ok/failed:      {p['ok']}/{p['failed']}, stalls {p['stalls']}, keyframe first {p['keyframe_first']}")
print(f"  delivered:              {gb:.2f} GB, {p['mbps_in']:.0f} Mb/s")
print(f"  bytes per player:       {p['bytes_in'] / players / 1e6:.2f} MB")
print(f"  ttff p50/p99:           {p['ttff_ms']['p50']:.1f} / {p['ttff_ms']['p99']:.1f} ms")
print(f"  server CPU:             {cpu:.2f} s ({cpu / seconds * 100:.0f}% of one core)")
print(f"  server CPU per GB:      {cpu / gb:.2f} CPU-s/GB")
print(f"  server RSS idle/peak:   {idle / 1024:.1f} / {peak / 1024:.1f} MB ({(peak - idle) / players:.1f} KB per player)")
print(f"  bench CPU:              {summary['bench_cpu']['total_s']:.2f} s" if 'bench_cpu' in summary else "")
PY
