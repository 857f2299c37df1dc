#!/usr/bin/env bash
# Live fan-out figures: one ffmpeg publisher, N players from one sluice-bench process, against a
# release build of Sluice on loopback. Prints server CPU seconds, CPU-s per GB delivered, peak RSS
# and RSS per player, bytes per player, and the bench's own summary (TTFF, stalls, failures).
#
# Usage: bench/live_fanout.sh [PLAYERS] [SECONDS] [VIDEO_BITRATE]     (defaults: 500 30 2400k)
# Every run is bounded: SECONDS of playing plus a few seconds of set-up.
set -euo pipefail
players=${1:-500}
seconds=${2:-30}
bitrate=${3:-2400k}
root=$(cd "$(dirname "$0")/.." && pwd)
make -C "$root" release >/dev/null
build="$root/build/release"
work=$(mktemp -d /tmp/sluice-bench-XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

media="$work/live.flv"
ffmpeg -nostdin -loglevel error -y -f lavfi -i "testsrc=size=1280x720:rate=25:duration=60" -f lavfi \
  -i "sine=duration=60" -vf noise=alls=20:allf=t -c:v libx264 -preset ultrafast -g 50 -b:v "$bitrate" \
  -maxrate "$bitrate" -bufsize "$bitrate" -pix_fmt yuv420p -c:a aac -b:a 128k -f flv "$media"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$work/sluice.yaml" <<YAML
rtmp:
  listen: 127.0.0.1:$port
apps:
  live: { type: live }
log:
  level: warn
YAML
"$build/server/sluice" --config "$work/sluice.yaml" >"$work/server.log" 2>&1 &
server=$!; pids+=("$server")
sleep 0.5
ffmpeg -nostdin -loglevel error -re -stream_loop -1 -i "$media" -c copy -f flv "rtmp://127.0.0.1:$port/live/bench" \
  >/dev/null 2>&1 &
pids+=("$!")
sleep 3
cpu() { awk '{print $14 + $15}' "/proc/$server/stat"; }
rss() { awk '/^VmRSS/ {print $2}' "/proc/$server/status"; }
ticks=$(getconf CLK_TCK)
idle_rss=$(rss)
cpu0=$(cpu)
peak=$idle_rss
"$build/tools/bench/sluice-bench" play -n "$players" --rate 250 -d "$seconds" -q --json "$work/bench.json" \
  "rtmp://127.0.0.1:$port/live/bench" >"$work/bench.txt" &
bench=$!; pids+=("$bench")
while kill -0 "$bench" 2>/dev/null; do
  r=$(rss); [ "$r" -gt "$peak" ] && peak=$r
  sleep 0.5
done
wait "$bench" || true
cpu1=$(cpu)
python3 - "$work/bench.json" "$players" "$seconds" "$bitrate" "$(( cpu1 - cpu0 ))" "$ticks" "$idle_rss" "$peak" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
players, seconds, bitrate = int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
cpu = int(sys.argv[5]) / int(sys.argv[6])
idle, peak = int(sys.argv[7]), int(sys.argv[8])
p = summary["players"]
gb = p["bytes_in"] / 1e9
print(f"live fan-out: {players} players x {seconds:.0f} s of a {bitrate} H.264 + 128k AAC stream")
print(f"  players ok/failed:      {p['ok']}/{p['failed']}, stalls {p['stalls']}, keyframe first {p['keyframe_first']}")
print(f"  delivered:              {gb:.2f} GB, {p['mbps_in']:.0f} Mb/s")
print(f"  bytes per player:       {p['bytes_in'] / players / 1e6:.2f} MB")
print(f"  ttff p50/p99:           {p['ttff_ms']['p50']:.1f} / {p['ttff_ms']['p99']:.1f} ms")
print(f"  server CPU:             {cpu:.2f} s ({cpu / seconds * 100:.0f}% of one core)")
print(f"  server CPU per GB:      {cpu / gb:.2f} CPU-s/GB")
print(f"  server RSS idle/peak:   {idle / 1024:.1f} / {peak / 1024:.1f} MB ({(peak - idle) / players:.1f} KB per player)")
print(f"  bench CPU:              {summary['bench_cpu']['total_s']:.2f} s" if 'bench_cpu' in summary else "")
PY
