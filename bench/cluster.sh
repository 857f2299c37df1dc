#!/usr/bin/env bash
# A cluster's cost and delay (docs/cluster.md, "Playing a stream published on another node"):
# a stream published on node A, played on nodes B and C, which pull it once from A (with the
# cluster token) and fan it out. Three release nodes (workers: 1 each; SLUICE_WORKERS overrides)
# share a redis-server that this script starts on a free loopback port (its own password and dir,
# killed at exit); lease 10 s. Everything on 127.0.0.1. The bars (issue 17):
#
# 1. Cost. ROUNDS rounds of two runs, alternating, each on a fresh cluster and a fresh stream name.
#    "single": sluice-bench publish sends one ~2.5 Mb/s FLV (bench_make_media) to A and PLAYERS
#    players play it from A itself for SECONDS (ramp RATE/s included); B and C are up but idle.
#    "cluster": the same publisher on A, PLAYERS players on B and PLAYERS on C at once (one
#    sluice-bench play per node), so B and C each pull the stream from A. CPU is /proc/PID/stat
#    utime+stime of each node (all threads) over the players' run, per GB its players received
#    (sluice-bench's bytes_in, chunk headers included). Bar: B's and C's CPU-s/GB each within 15%
#    of A's in the single run (ratio <= 1.15), per round and as the median of the rounds. A's own
#    CPU in the cluster run (the publisher and the two pulls) is reported beside it.
# 2. Delay, with sluice-bench latency (one publisher and LAT_PLAYERS players in one process, arrival
#    - send per audio/video message). The publisher takes the first URL and the players take the
#    URLs round-robin, so player 0 plays the publisher's URL on A: to keep it out of the figures
#    the live app requires a play key (play: { keys }, on every node), the publisher's URL carries
#    none (player 0 is refused, --allow-failures 1) and the measured players carry it, on A
#    ("single") or on B ("cluster"; B's pull passes A's rules with the cluster token). Bar: the
#    cluster run's p99 < 100 ms; the single run's figures and the difference are printed beside.
#    The figures include each player's join (the GOP cache first, the pull's set-up on B).
# 3. Time to first frame on a non-owner node: TTFF_STREAMS streams (>= 9) published on A by one
#    sluice-bench publish, then, one at a time, one `sluice-bench play -n 1` on B of a stream B has
#    never pulled (lookup in Redis + the pull from A + A's GOP cache), and for comparison one on A
#    itself. ttff_ms is sluice-bench's: from the play command to the first video picture. Bar: p50
#    on B < 300 ms; p50 / p90 / max printed.
#
# Players read as data arrives (sluice-bench play --read-batch-ms 0, like bench/compare.sh's
# default; READ_BATCH_MS=N makes them read in N ms batches). The servers keep the defaults of
# rtmp.player_queue (SLUICE_WRITE_DELAY / SLUICE_WRITE_BUDGET / SLUICE_WRITE_LANES override
# write_delay / write_budget / write_lanes; bench/lib.sh bench_player_queue_keys).
#
# Usage: bench/cluster.sh [PLAYERS] [SECONDS] [ROUNDS]   (defaults 500 30 3: about 5 minutes)
# Environment: PLAYERS, SECONDS, ROUNDS (when not given as arguments), LAT_PLAYERS (20),
#   LAT_SECONDS (20), TTFF_STREAMS (10), RATE (ramp, players/s, 250), READ_BATCH_MS (0),
#   SLUICE_WORKERS (1), NO_BUILD=1 (use build/release as it is), OUT=FILE (copy the results JSON
#   there too). Run it alone on the machine (flock /tmp/sluice-cpu.lock bench/cluster.sh).
# Prints the tables; the results (every run, medians, bars) are WORK/cluster.json, and WORK (the
# configs, server and redis logs, sluice-bench output) is kept.
set -euo pipefail
players=${1:-${PLAYERS:-500}}
# SECONDS is also bash's own clock: the caller's value is the one in the environment.
seconds=${2:-$(printenv SECONDS || true)}
seconds=${seconds:-30}
rounds=${3:-${ROUNDS:-3}}
lat_players=${LAT_PLAYERS:-20}
lat_seconds=${LAT_SECONDS:-20}
ttff_streams=${TTFF_STREAMS:-10}
rate=${RATE:-250}
workers=${SLUICE_WORKERS:-1}
read_batch=${READ_BATCH_MS:-0}
for v in "$players" "$seconds" "$rounds" "$lat_players" "$lat_seconds" "$ttff_streams" "$rate" "$workers"; do
  case "$v" in ''|*[!0-9]*|0) echo "cluster.sh: PLAYERS, SECONDS, ROUNDS and the other counts must be positive integers" >&2; exit 2 ;; esac
done
case "$read_batch" in ''|*[!0-9]*) echo "cluster.sh: READ_BATCH_MS needs a number of ms (0: read as data arrives)" >&2; exit 2 ;; esac
[ "$ttff_streams" -ge 9 ] || { echo "cluster.sh: TTFF_STREAMS must be at least 9" >&2; exit 2; }
if [ "$read_batch" = 0 ]; then read_mode="reads as data arrives (--read-batch-ms 0)"
else read_mode="reads in ${read_batch} ms batches (--read-batch-ms $read_batch)"; fi
for tool in redis-server redis-cli ffmpeg curl flock; do
  command -v "$tool" >/dev/null || { echo "cluster.sh: needs $tool" >&2; exit 1; }
done

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
if [ "${NO_BUILD:-0}" != 1 ]; then
  if [ -f "$root/build/release/CMakeCache.txt" ]; then
    flock /tmp/sluice-release.lock cmake --build "$root/build/release" -j2 >/dev/null
  else
    make -C "$root" release >/dev/null
  fi
fi
out=$(mktemp -d /tmp/sluice-bench-cluster-XXXXXX)  # WORK: kept
work="$out/scratch"                                 # removed at exit (bench_cleanup)
pids=()
bench_trap_cleanup
mkdir -p "$work/bin" "$out/redis"
# Private copies (taken under the build lock), so that a rebuild of the tree during the run cannot
# change them.
flock /tmp/sluice-release.lock cp "$root/build/release/server/sluice" "$root/build/release/bench/load/sluice-bench" "$work/bin/"
sluice="$work/bin/sluice"
bench="$work/bin/sluice-bench"
helper="$root/bench/cluster.py"
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null | wc -l)
hz=$(getconf CLK_TCK)
secret() { head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
rpass=$(secret)
token=$(secret)
key=cluster-bench-key

# forget PID: drop it from pids (cleanup must not signal a PID that may have been reused since).
forget() { local p rest=(); for p in "${pids[@]}"; do [ "$p" = "$1" ] || rest+=("$p"); done; pids=("${rest[@]}"); }
stop() { local p; for p in "$@"; do bench_stop "$p"; forget "$p"; done; }

rport=$(bench_free_port)
redis-server --bind 127.0.0.1 --port "$rport" --save "" --appendonly no --requirepass "$rpass" \
  --dir "$out/redis" --logfile "$out/redis/redis.log" &
pids+=("$!")
bench_wait_port "$rport" || { echo "cluster.sh: redis-server did not start, see $out/redis/redis.log" >&2; exit 1; }
rcli() { redis-cli -h 127.0.0.1 -p "$rport" --no-auth-warning -a "$rpass" -n 1 "$@"; }

media="$work/media.flv"
bench_make_media "$media" 20 2400k

declare -A node_pid node_rtmp node_http
node_names=(a b c)

# start_cluster DIR APP_YAML: nodes a, b, c (a fresh process each), up and connected to Redis.
start_cluster() {
  local dir=$1 app=$2 n port hport queue=""
  queue=$(bench_player_queue_keys)
  [ -z "$queue" ] || queue="  player_queue: { $queue }"
  for n in "${node_names[@]}"; do
    port=$(bench_free_port); hport=$(bench_free_port)
    cat > "$dir/$n.yaml" <<YAML
workers: $workers
rtmp:
  listen: 127.0.0.1:$port
  chunk_size: 4096
$queue
http: { listen: 127.0.0.1:$hport }
cluster:
  registry: redis://127.0.0.1:$rport/1
  node_id: $n
  advertise: rtmp://127.0.0.1:$port
  password: "$rpass"
  token: "$token"
  lease: 10s
apps:
  live: $app
log: { level: warn }
YAML
    "$sluice" --config "$dir/$n.yaml" >"$dir/$n.log" 2>&1 &
    node_pid[$n]=$!; pids+=("$!")
    node_rtmp[$n]=$port; node_http[$n]=$hport
  done
  for n in "${node_names[@]}"; do
    bench_wait_port "${node_rtmp[$n]}" || { echo "cluster.sh: node $n did not start, see $dir/$n.log" >&2; exit 1; }
    local tries=100
    until curl -sf -m 2 "http://127.0.0.1:${node_http[$n]}/readyz" >/dev/null; do
      tries=$(( tries - 1 ))
      [ "$tries" -gt 0 ] || { echo "cluster.sh: node $n not ready (registry?), see $dir/$n.log" >&2; exit 1; }
      sleep 0.1
    done
  done
}

# stop_cluster DIR [PID...]: the nodes' API views and log lengths first (for the record), then
# SIGTERM to C, B and A (the pulling nodes before their owner, so that no pull sees its owner go),
# then to the PIDs (the publisher: A's stream lives until A is gone).
stop_cluster() {
  local dir=$1 n; shift
  for n in "${node_names[@]}"; do
    wc -l < "$dir/$n.log" > "$dir/$n.loglines"
    curl -s -m 5 "http://127.0.0.1:${node_http[$n]}/metrics" > "$dir/metrics-$n.txt" || true
    curl -s -m 5 "http://127.0.0.1:${node_http[$n]}/api/v1/relays" > "$dir/relays-$n.json" || true
    curl -s -m 5 "http://127.0.0.1:${node_http[$n]}/api/v1/clients" > "$dir/clients-$n.json" || true
  done
  curl -s -m 5 "http://127.0.0.1:${node_http[a]}/api/v1/cluster" > "$dir/cluster-a.json" || true
  for n in c b a; do stop "${node_pid[$n]}"; done
  [ $# -eq 0 ] || stop "$@"
}

# wait_owned STREAM...: until A's claim of each live/STREAM is in Redis (10 s at most).
wait_owned() {
  local s tries
  for s in "$@"; do
    tries=100
    until rcli GET "sluice:stream:live/$s" 2>/dev/null | grep -q '^a '; do
      tries=$(( tries - 1 ))
      [ "$tries" -gt 0 ] || { echo "cluster.sh: A never claimed live/$s (redis: $(rcli GET "sluice:stream:live/$s" 2>&1))" >&2; exit 1; }
      sleep 0.1
    done
  done
}

url() { echo "rtmp://127.0.0.1:${node_rtmp[$1]}/live/$2"; }

run() {  # run SCENARIO(single|cluster) ROUND
  local scenario=$1 round=$2 dir="$out/$1-$2" stream="cost$2$1" n pub t0=() t1=() plays=()
  mkdir -p "$dir"
  start_cluster "$dir" "{ type: live }"
  "$bench" publish -n 1 -d $(( seconds + 30 )) -q -f "$media" --json "$dir/publish.json" \
    "$(url a "$stream")" >"$dir/publish.txt" 2>&1 &
  pub=$!; pids+=("$pub")
  wait_owned "$stream"
  sleep 2
  for n in "${node_names[@]}"; do t0+=("$(bench_cpu_ticks "${node_pid[$n]}")"); done
  local on=(a)
  [ "$scenario" = single ] || on=(b c)
  for n in "${on[@]}"; do
    "$bench" play -n "$players" --rate "$rate" -d "$seconds" --read-batch-ms "$read_batch" -q \
      --json "$dir/play-$n.json" "$(url "$n" "$stream")" >"$dir/play-$n.txt" 2>&1 &
    plays+=("$!"); pids+=("$!")
  done
  for n in "${plays[@]}"; do wait "$n" || true; forget "$n"; done
  for n in "${node_names[@]}"; do t1+=("$(bench_cpu_ticks "${node_pid[$n]}")"); done
  stop_cluster "$dir" "$pub"
  python3 "$helper" run "$dir" "$scenario" "$round" "$hz" "$(( t1[0] - t0[0] ))" "$(( t1[1] - t0[1] ))" \
    "$(( t1[2] - t0[2] ))" >> "$out/runs.jsonl"
  python3 "$helper" show-run "$(tail -1 "$out/runs.jsonl")"
}

latency() {  # latency SCENARIO(single|cluster)
  local scenario=$1 dir="$out/latency-$1" urls=() i on=a lat
  mkdir -p "$dir"
  start_cluster "$dir" "{ type: live, play: { keys: [$key] } }"
  [ "$scenario" = single ] || on=b
  urls=("$(url a lat)")  # the publisher, and player 0 (refused: no key)
  for (( i = 0; i < lat_players; i++ )); do urls+=("$(url "$on" "lat?key=$key")"); done
  "$bench" latency -n $(( lat_players + 1 )) --allow-failures 1 -d "$lat_seconds" --read-batch-ms 0 -q \
    -f "$media" --json "$dir/latency.json" "${urls[@]}" >"$dir/latency.txt" 2>&1 &
  lat=$!; pids+=("$lat")
  wait "$lat" || true; forget "$lat"
  stop_cluster "$dir"
  python3 "$helper" latency "$dir" "$scenario" >> "$out/latency.jsonl"
  python3 "$helper" show-latency "$(tail -1 "$out/latency.jsonl")"
}

ttff() {  # one play on B of each of TTFF_STREAMS fresh streams of A, then one on A for comparison
  local dir="$out/ttff" pub i names=() p
  mkdir -p "$dir"
  start_cluster "$dir" "{ type: live }"
  "$bench" publish -n "$ttff_streams" --rate 0 -d $(( ttff_streams * 6 + 30 )) -q -f "$media" \
    --json "$dir/publish.json" "$(url a 't{i}')" >"$dir/publish.txt" 2>&1 &
  pub=$!; pids+=("$pub")
  for (( i = 0; i < ttff_streams; i++ )); do names+=("t$i"); done
  wait_owned "${names[@]}"
  sleep 2
  for (( i = 0; i < ttff_streams; i++ )); do
    for n in b a; do
      "$bench" play -n 1 -d 1.5 --read-batch-ms "$read_batch" -q --json "$dir/play-$n-$i.json" \
        "$(url "$n" "t$i")" >"$dir/play-$n-$i.txt" 2>&1 &
      p=$!; pids+=("$p")
      wait "$p" || true; forget "$p"
    done
  done
  stop_cluster "$dir" "$pub"
  python3 "$helper" ttff "$dir" "$ttff_streams" > "$out/ttff.json"
  python3 "$helper" show-ttff "$out/ttff.json"
}

echo "cluster: nodes a, b, c (workers: $workers each, lease 10 s), redis on 127.0.0.1:$rport;" \
  "cost: $players players per serving node, $seconds s per run, $rounds round(s), ramp $rate/s, players $read_mode;" \
  "latency: $lat_players players, $lat_seconds s; ttff: $ttff_streams streams; commit $commit" \
  "($dirty files changed in the tree); work dir $out"
for (( round = 1; round <= rounds; round++ )); do
  run single "$round"
  run cluster "$round"
done
latency single
latency cluster
ttff
python3 "$helper" report "$out" "$media" "$players" "$seconds" "$rounds" "$rate" "$workers" \
  "$lat_players" "$lat_seconds" "$read_batch" "$read_mode" "$commit" "$dirty"
[ -z "${OUT:-}" ] || cp "$out/cluster.json" "$OUT"
echo "results: $out/cluster.json${OUT:+ (and $OUT)}"
