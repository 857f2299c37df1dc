#!/usr/bin/env bash
# Edge relay cost and delay (docs/relays.md, type: edge). The bar: an edge relaying one 2.5 Mb/s
# stream to 1000 players costs within 10% of the origin serving them itself, and the delay through
# origin -> edge stays under 100 ms at p99.
#
# Cost: ROUNDS rounds of two runs, alternating. "origin": one release server, sluice-bench publish
# sends one ~2.5 Mb/s FLV to it, sluice-bench play starts PLAYERS players of it for SECONDS (ramp
# included). "edge": the same origin and publisher, plus an edge server (type: edge, origins: the
# origin) that pulls the stream on demand over one upstream connection; the PLAYERS players play
# it from the edge. CPU is /proc/PID/stat utime+stime of the server process (all threads) before
# and after the players' run, per GB the players received (sluice-bench's bytes_in, chunk headers
# included): the origin's in the first run, the edge's in the second (the origin's CPU for its one
# upstream player is reported beside it, for information). Ratio edge/origin per round and the
# median of the rounds; bar <= 1.10. Both servers have one worker loop (SLUICE_WORKERS overrides).
#
# Delay: sluice-bench latency runs one publisher and LAT_PLAYERS players in one process and
# measures arrival - send per audio/video message. The publisher always uses the first URL, and
# the players take the URLs round-robin, so player 0 always plays the publisher's URL on the
# origin. To keep it out of the figures, the origin's live app requires a play key here
# (play: { keys }), the publisher's URL carries none (player 0 is refused, --allow-failures 1) and
# the measured players carry the key ("origin" run: players on the origin) or play from the edge,
# whose upstream URL carries the key ("edge" run). Reports p50/p90/p99/max of both runs and the
# difference, the delay the edge adds; the bar is the edge run's p99 < 100 ms. The figures include
# the join of each player (the GOP cache it gets first, and in the edge run the pull's set-up),
# diluted over LAT_SECONDS of steady messages. Both servers keep the default adaptive write hold
# (rtmp.player_queue, docs/configuration.md), which bounds what each hop holds back: the edge's
# upstream connection is one more player of the origin, so expect the edge to add up to about the
# origin's hold at its load.
#
# Usage: bench/relay_edge.sh [PLAYERS] [SECONDS] [ROUNDS]   (defaults: 1000 30 3)
# Environment: LAT_PLAYERS (20), LAT_SECONDS (SECONDS), RATE (ramp, players/s, 250),
#   SLUICE_WORKERS (1), OUT=FILE (copy the results JSON there; the work dir is then removed),
#   NO_BUILD=1 (use build/release as it is).
# Prints a table; the results JSON (every run and the medians) is $work/relay_edge.json, and the
# work dir (configs, server logs, sluice-bench output) is kept unless OUT is given.
set -euo pipefail
players=${1:-1000}
seconds=${2:-30}
rounds=${3:-3}
lat_players=${LAT_PLAYERS:-20}
lat_seconds=${LAT_SECONDS:-$seconds}
rate=${RATE:-250}
workers=${SLUICE_WORKERS:-1}
for v in "$players" "$seconds" "$rounds" "$lat_players" "$lat_seconds" "$rate" "$workers"; do
  case "$v" in ''|*[!0-9]*|0) echo "relay_edge.sh: arguments must be positive integers" >&2; exit 2 ;; esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
[ "${NO_BUILD:-0}" = 1 ] || make -C "$root" release >/dev/null
work=$(mktemp -d /tmp/sluice-bench-relay-XXXXXX)
# Private copies, so that a rebuild of the tree during the run cannot change them.
mkdir -p "$work/bin"
cp "$root/build/release/server/sluice" "$root/build/release/bench/load/sluice-bench" "$work/bin/"
sluice="$work/bin/sluice"
bench="$work/bin/sluice-bench"
helper="$root/bench/relay_edge.py"
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  rm -rf "$work/bin" "$work/media.flv"
  if [ -n "${OUT:-}" ]; then rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

media="$work/media.flv"
bench_make_media "$media" 20 2400k
hz=$(getconf CLK_TCK)
key=relay-bench-key

# server NAME DIR RTMP_PORT HTTP_PORT APP_YAML: starts a server, its PID in $server_pid.
server() {
  local name=$1 dir=$2 port=$3 hport=$4 app=$5
  cat > "$dir/$name.yaml" <<YAML
workers: $workers
rtmp: { listen: 127.0.0.1:$port, chunk_size: 4096 }
http: { listen: 127.0.0.1:$hport }
apps:
  live: $app
log: { level: warn }
YAML
  "$sluice" --config "$dir/$name.yaml" >"$dir/$name.log" 2>&1 &
  server_pid=$!; pids+=("$server_pid")
  bench_wait_port "$port" || { echo "relay_edge.sh: $name did not start, see $dir/$name.log" >&2; exit 1; }
}

# stop PID...: SIGTERM each, SIGKILL after 5 s, wait, and forget it (cleanup must not signal a
# PID that may have been reused since).
forget() { local p rest=(); for p in "${pids[@]}"; do [ "$p" = "$1" ] || rest+=("$p"); done; pids=("${rest[@]}"); }
stop() { local p; for p in "$@"; do bench_stop "$p"; forget "$p"; done; }

run() {  # run SCENARIO(origin|edge) ROUND
  local scenario=$1 round=$2 dir="$work/$1-$2"
  mkdir -p "$dir"
  local oport ohport eport ehport origin edge="" pub play
  oport=$(bench_free_port); ohport=$(bench_free_port)
  server origin "$dir" "$oport" "$ohport" "{ type: live }"; origin=$server_pid
  local play_port=$oport play_hport=$ohport
  if [ "$scenario" = edge ]; then
    eport=$(bench_free_port); ehport=$(bench_free_port)
    server edge "$dir" "$eport" "$ehport" "{ type: edge, origins: [rtmp://127.0.0.1:$oport/live] }"; edge=$server_pid
    play_port=$eport play_hport=$ehport
  fi
  "$bench" publish -n 1 -d $(( seconds + 20 )) -q -f "$media" --json "$dir/publish.json" \
    "rtmp://127.0.0.1:$oport/live/s" >"$dir/publish.txt" 2>&1 &
  pub=$!; pids+=("$pub")
  sleep 3
  local o0 o1 e0=0 e1=0
  o0=$(bench_cpu_ticks "$origin"); [ -z "$edge" ] || e0=$(bench_cpu_ticks "$edge")
  "$bench" play -n "$players" --rate "$rate" -d "$seconds" -q --json "$dir/play.json" \
    "rtmp://127.0.0.1:$play_port/live/s" >"$dir/play.txt" 2>&1 &
  play=$!; pids+=("$play")
  wait "$play" || true; forget "$play"
  o1=$(bench_cpu_ticks "$origin"); [ -z "$edge" ] || e1=$(bench_cpu_ticks "$edge")
  curl -s -m 5 "http://127.0.0.1:$play_hport/metrics" > "$dir/metrics.txt" || true
  curl -s -m 5 "http://127.0.0.1:$play_hport/api/v1/relays" > "$dir/relays.json" || true
  stop "$pub"
  [ -z "$edge" ] || stop "$edge"
  stop "$origin"
  python3 "$helper" run "$dir" "$scenario" "$round" "$hz" "$(( o1 - o0 ))" "$(( e1 - e0 ))" >> "$work/runs.jsonl"
  python3 "$helper" show-run "$(tail -1 "$work/runs.jsonl")"
}

latency() {  # latency SCENARIO(origin|edge)
  local scenario=$1 dir="$work/latency-$1"
  mkdir -p "$dir"
  local oport ohport eport ehport origin edge="" urls=() i
  oport=$(bench_free_port); ohport=$(bench_free_port)
  server origin "$dir" "$oport" "$ohport" "{ type: live, play: { keys: [$key] } }"; origin=$server_pid
  urls=("rtmp://127.0.0.1:$oport/live/lat")  # the publisher, and player 0 (refused: no key)
  if [ "$scenario" = edge ]; then
    eport=$(bench_free_port); ehport=$(bench_free_port)
    server edge "$dir" "$eport" "$ehport" \
      "{ type: edge, origins: [\"rtmp://127.0.0.1:$oport/live/{stream}?key=$key\"] }"; edge=$server_pid
    for (( i = 0; i < lat_players; i++ )); do urls+=("rtmp://127.0.0.1:$eport/live/lat"); done
  else
    for (( i = 0; i < lat_players; i++ )); do urls+=("rtmp://127.0.0.1:$oport/live/lat?key=$key"); done
  fi
  "$bench" latency -n $(( lat_players + 1 )) --allow-failures 1 -d "$lat_seconds" -q -f "$media" \
    --json "$dir/latency.json" "${urls[@]}" >"$dir/latency.txt" 2>&1 &
  local lat=$!; pids+=("$lat")
  wait "$lat" || true; forget "$lat"
  [ -z "$edge" ] || curl -s -m 5 "http://127.0.0.1:$ehport/api/v1/relays" > "$dir/relays.json" || true
  [ -z "$edge" ] || stop "$edge"
  stop "$origin"
  python3 "$helper" latency "$dir" "$scenario" >> "$work/latency.jsonl"
  python3 "$helper" show-latency "$(tail -1 "$work/latency.jsonl")"
}

echo "relay_edge: $players players, $seconds s per run, $rounds round(s), ramp $rate/s, workers: $workers;" \
  "latency: $lat_players players, $lat_seconds s; work dir $work"
for (( round = 1; round <= rounds; round++ )); do
  run origin "$round"
  run edge "$round"
done
latency origin
latency edge
python3 "$helper" report "$work" "$media" "$players" "$seconds" "$rounds" "$rate" "$workers" \
  "$lat_players" "$lat_seconds"
if [ -n "${OUT:-}" ]; then
  cp "$work/relay_edge.json" "$OUT"
  echo "results: $OUT"
else
  echo "results: $work/relay_edge.json"
fi
