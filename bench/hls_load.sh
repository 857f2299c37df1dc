#!/usr/bin/env bash
# HLS delivery cost and latency against HTTP-FLV, on one Sluice release server (workers: 1).
#
# One live stream of ~2.5 Mb/s (bench_make_media: 1280x720 25 fps H.264, GOP 2 s, + AAC) is
# published over RTMP by `sluice-bench publish` to live/fan, an app with low-latency HLS (2 s
# segments, 200 ms parts, on demand, idle_close 5 s). Then:
#
#  1. Muxer memory: the server's RSS with the publisher alone (no muxer: on demand), then with one
#     LL-HLS reader for 20 s (the muxer runs, its window of 6 segments fills); the difference.
#  2. Load, ROUNDS times (the order alternates): READERS HTTP-FLV readers of live/fan.flv
#     (`sluice-bench http-flv`), then READERS LL-HLS readers of live/fan/index.m3u8
#     (`sluice-bench hls`: blocking reload and every part, one keep-alive connection each), each
#     for SECONDS, ramp-up RATE/s included. Per run: the server's CPU (utime + stime, /proc/PID/stat)
#     over the bench's run / the GB the readers received (socket bytes: HTTP headers, playlists
#     and parts for HLS), peak RSS, readers that fell behind. After an HLS run the script waits for
#     the muxer to stop (idle_close) so that the next HTTP-FLV run does not pay for it.
#  3. Latency, each on its own stream with the publisher inside the bench process (`sluice-bench
#     hls --publish`: every part's arrival against the moment its first sample was sent): 20
#     LL-HLS readers, 20 standard-HLS readers of an MPEG-TS app and of an fMP4 app (2 s segments,
#     players reloading as RFC 8216 6.3.4 says), and READERS LL-HLS readers at once (latency
#     under load).
#
# Bars (the HLS issue): HLS / HTTP-FLV CPU-s per GB at most 1.3x, no reader fell behind, LL-HLS
# latency under 2 s, standard HLS under 3 segment durations (6 s).
#
# Usage: bench/hls_load.sh [READERS] [SECONDS] [ROUNDS]   (defaults: 1000 25 3; about 8 minutes)
# Environment: HLS_RATE=200 (ramp-up, connections/s); HLS_OUT=DIR (results; default
# /tmp/sluice-hls-load-DATE); HLS_NO_BUILD=1 (take build/release as it is); JOBS for the build.
set -euo pipefail
readers=${1:-1000}
seconds=${2:-25}
rounds=${3:-3}
rate=${HLS_RATE:-200}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
if [ -z "${HLS_NO_BUILD:-}" ]; then
  cmake -S "$root" -B "$root/build/release" -DCMAKE_BUILD_TYPE=Release -DSLUICE_WERROR=OFF -DSLUICE_TESTS=OFF >/dev/null
  flock /tmp/sluice-release.lock cmake --build "$root/build/release" -j"${JOBS:-2}" --target sluice sluice-bench >/dev/null
fi
out=${HLS_OUT:-/tmp/sluice-hls-load-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
work=$(mktemp -d /tmp/sluice-bench-hls-XXXXXX)
pids=()
bench_trap_cleanup  # stops every PID in pids, removes $work
bin="$work/bin"
mkdir -p "$bin"
cp "$root/build/release/server/sluice" "$root/build/release/bench/load/sluice-bench" "$bin/"
hz=$(getconf CLK_TCK)
py="$root/bench/hls_load.py"

media="$work/media.flv"
bench_make_media "$media" 20 2400k

port=$(bench_free_port); hport=$(bench_free_port)
cat > "$work/sluice.yaml" <<YAML
workers: 1
rtmp: { listen: 127.0.0.1:$port, chunk_size: 4096 }
http: { listen: 127.0.0.1:$hport }
apps:
  live: { type: live, hls: { variant: low-latency, segment: 2s, part: 200ms, on_demand: true, idle_close: 5s } }
  ts: { type: live, hls: { variant: mpegts, segment: 2s, on_demand: true, idle_close: 5s } }
  fmp4: { type: live, hls: { variant: fmp4, segment: 2s, on_demand: true, idle_close: 5s } }
log: { level: warn }
YAML
cp "$work/sluice.yaml" "$out/"
"$bin/sluice" --config "$work/sluice.yaml" >"$out/server.log" 2>&1 &
server=$!; pids+=("$server")
bench_wait_port "$port" && bench_wait_port "$hport" ||
  { echo "hls_load.sh: the server did not start:" >&2; cat "$out/server.log" >&2; exit 1; }
http="http://127.0.0.1:$hport"

# The publisher of live/fan lives for the whole script (killed by the cleanup).
"$bin/sluice-bench" publish -q -d $(( rounds * 2 * (seconds + 15) + 300 )) -f "$media" \
  "rtmp://127.0.0.1:$port/live/fan" >"$out/publish.txt" 2>&1 &
pids+=("$!")
sleep 4

rss_avg() {  # rss_avg SECONDS: mean VmRSS of the server over that long, KiB
  local n=$(( $1 * 4 )) sum=0 i
  for (( i = 0; i < n; i++ )); do sum=$(( sum + $(bench_rss "$server") )); sleep 0.25; done
  echo $(( sum / n ))
}
# 1. Muxer memory. The publisher alone, then one LL-HLS reader (the muxer starts and fills its window).
idle0=$(bench_cpu_ticks "$server"); i0=$(date +%s.%N)
rss_no_muxer=$(rss_avg 4)
idle1=$(bench_cpu_ticks "$server"); i1=$(date +%s.%N)
"$bin/sluice-bench" hls -n 1 -d 22 -q "$http/live/fan/index.m3u8" >"$out/rss-probe.txt" 2>&1 &
probe=$!; pids+=("$probe")
sleep 18
rss_muxer=$(rss_avg 3)
wait "$probe" || true
echo "{\"rss_no_muxer_kb\": $rss_no_muxer, \"rss_muxer_kb\": $rss_muxer, \"idle_ticks\": $(( idle1 - idle0 )), \"idle_s\": $(python3 -c "print($i1 - $i0)"), \"hz\": $hz}" \
  > "$out/probe.json"
sleep 8  # idle_close: the muxer stops

run() {  # run KIND(flv|hls) ROUND
  local kind=$1 round=$2 dir="$out/$1-$2" cpu0 cpu1 t0 t1 peak=0 r
  mkdir -p "$dir"
  cpu0=$(bench_cpu_ticks "$server"); t0=$(date +%s.%N)
  if [ "$kind" = flv ]; then
    "$bin/sluice-bench" http-flv -n "$readers" --rate "$rate" -d "$seconds" -q --allow-failures "$readers" \
      --json "$dir/bench.json" "$http/live/fan.flv" >"$dir/bench.txt" 2>&1 &
  else
    "$bin/sluice-bench" hls -n "$readers" --rate "$rate" -d "$seconds" -q --allow-failures "$readers" \
      --json "$dir/bench.json" "$http/live/fan/index.m3u8" >"$dir/bench.txt" 2>&1 &
  fi
  local bench=$!; pids+=("$bench")
  while kill -0 "$bench" 2>/dev/null; do
    r=$(bench_rss "$server"); [ "$r" -gt "$peak" ] && peak=$r
    sleep 0.5
  done
  wait "$bench" || true
  cpu1=$(bench_cpu_ticks "$server"); t1=$(date +%s.%N)
  python3 "$py" record "$dir" "$kind" "$round" "$(( cpu1 - cpu0 ))" "$hz" "$t0" "$t1" "$peak" \
    "$(cut -d' ' -f1 /proc/loadavg)" >> "$out/runs.jsonl"
  tail -1 "$out/runs.jsonl" >&2
  if [ "$kind" = hls ]; then sleep 9; else sleep 3; fi  # the muxer's idle_close; the readers' closes
}
# 2. Load.
for (( round = 1; round <= rounds; round++ )); do
  if (( round % 2 )); then run flv "$round"; run hls "$round"; else run hls "$round"; run flv "$round"; fi
done

# 3. Latency, publisher in the bench process, each on its own stream.
latency() {  # latency NAME READERS APP [sluice-bench hls options]
  local name=$1 n=$2 app=$3; shift 3
  "$bin/sluice-bench" hls -n "$n" --rate "$rate" -d 30 -q --allow-failures "$n" "$@" -f "$media" \
    --publish "rtmp://127.0.0.1:$port/$app/$name" --json "$out/latency-$name.json" \
    "$http/$app/$name/index.m3u8" >"$out/latency-$name.txt" 2>&1 || true
  echo "latency $name: $(grep -m1 'latency ms (' "$out/latency-$name.txt" || echo none)" >&2
}
latency ll20 20 live
latency ts20 20 ts
latency fmp4seg20 20 fmp4
latency ll-load "$readers" live

python3 "$py" report "$out" "$readers" "$seconds" "$rate" | tee "$out/report.md"
echo "results: $out" >&2
