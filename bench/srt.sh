#!/usr/bin/env bash
# SRT against RTMP on one Sluice worker loop (`workers: 1`), side by side in one run, with
# sluice-bench's SRT modes (bench/load/README.md). Each run gets a fresh server; SRT and RTMP runs
# alternate within each repetition; the server's CPU comes from /proc/PID/stat (all its threads,
# libsrt's included). docs/benchmarks.md, section "SRT against RTMP", explains the method and holds
# the latest figures.
#
# Usage: bench/srt.sh [--reps N] [--seconds S] [--publishers N] [--readers N] [--out DIR]
#                     [--no-build] [SCENARIO...]
# Scenarios (default: ingest fanout fanout500 delay syscalls profile; about 12 minutes with 3
# repetitions):
#   ingest    PUBLISHERS (20) publishers of ~5 Mb/s for SECONDS (20): SRT (srt-publish, MPEG-TS, 1316-byte
#             messages) then RTMP (publish, the same media as FLV). Bars: no loss (every byte an SRT
#             publisher sent is in the server's srt_close bytes_in, no continuity error, no packet
#             dropped), server CPU-s per GB ingested SRT <= 1.3x RTMP.
#   fanout    READERS (100) readers of one ~5 Mb/s stream (one SRT publisher): SRT (srt-read, callers
#             on 4 shared local ports) then RTMP (play --read-batch-ms 0). Bars: server CPU-s per GB
#             delivered SRT <= 2x RTMP, no stalls.
#   fanout500 the same with 500 readers of a ~1 Mb/s stream (960x540, 900k + 96k AAC): the issue's
#             reader count. On 2 cores libsrt's readers in the bench (a TSBPD thread per connection,
#             ACKs every 10 ms) cannot take 500 x 5 Mb/s, nor quite 500 x 1 Mb/s:
#             read the bench's CPU, lag and the readers' drops before the server's figures.
#   delay     one SRT publisher and 20 RTMP players in one process (latency --publish srt://): the
#             delay from a frame's last byte sent over SRT to its arrival at the players. Bar: p99 <=
#             srt.latency + 50 ms. Beside it the same with an RTMP publisher (latency, FLV).
#   syscalls  one ingest pair and one fan-out pair (14 s) with `perf stat` counting the server's
#             syscalls (sendmsg, recvmsg, futex, ...), context switches and CPU over 8 s of steady
#             state: what sendmmsg or UDP GSO would save, what the threads cost (not repeated).
#   profile   the same runs under `perf record -g` (8 s); the server's profile by thread and by
#             symbol goes to OUT/profile-{ingest,fanout}-{srt,rtmp}*.txt (not repeated).
# --reps N: repetitions of ingest, fanout and delay (default 3). --seconds S: length of their runs
# (default 20, at most 30). --out DIR: where results go (default /tmp/sluice-srt-DATE; kept).
# Sluice is the working tree's release build (make release, then copied so a concurrent rebuild
# cannot change it mid-run); --no-build uses build/release as it is. SLUICE_BIN and BENCH_BIN
# name other binaries (a private build) and skip the build.
# Environment: SRT_LATENCY (ms, default 120): the server's srt.latency and the callers'.
# BENCH_NICE (e.g. -10): run the servers and the bench at that nice level (on a machine shared with
# CPU-bound work of others; the report says so).
# SRT_MEDIA_KBIT (default 4800): the video bitrate of the generated media (AAC 128k is added).
# SRS_BIN: an SRS built with SRT (--srt=on; bench/peers/build_srs.sh builds it without): SRS
# runs the ingest and fan-out scenarios too, beside Sluice (its SRT listener takes a port, not an
# address: it binds every interface, and the bench talks to it on 127.0.0.1). SRS converts an SRT
# publication to RTMP with timestamps of its own, so the delay scenario, which matches frames by
# Sluice's timestamps, is Sluice's only.
# Every run is bounded (SECONDS, plus a few seconds of set-up), on 127.0.0.1.
set -euo pipefail

all_scenarios=(ingest fanout fanout500 delay syscalls profile)
reps=3
seconds=20
publishers=20
readers=100
out=""
build=1
scenarios=()
usage() { sed -n '2,45p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --publishers) publishers=$2; shift 2 ;;
    --readers) readers=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) usage 0 ;;
    -*) echo "srt.sh: unknown option $1" >&2; usage ;;
    *) scenarios+=("$1"); shift ;;
  esac
done
[ ${#scenarios[@]} -gt 0 ] || scenarios=("${all_scenarios[@]}")
for s in "${scenarios[@]}"; do
  case " ${all_scenarios[*]} " in *" $s "*) ;; *) echo "srt.sh: unknown scenario $s" >&2; exit 2 ;; esac
done
for v in "$reps" "$seconds" "$publishers" "$readers"; do
  case "$v" in ''|*[!0-9]*|0) echo "srt.sh: --reps, --seconds, --publishers and --readers take positive integers" >&2; exit 2 ;; esac
done
[ "$seconds" -le 30 ] || { echo "srt.sh: --seconds is at most 30" >&2; exit 2; }
latency=${SRT_LATENCY:-120}
prio=()
[ -z "${BENCH_NICE:-}" ] || prio=(nice -n "$BENCH_NICE")
media_kbit=${SRT_MEDIA_KBIT:-4800}

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
. "$root/bench/peers/build_srs.sh"   # the helpers only: srs_exec
py=/usr/bin/python3
[ -x "$py" ] || py=python3
report="$root/bench/srt_report.py"
[ -n "$out" ] || out="/tmp/sluice-srt-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
out=$(cd "$out" && pwd)
log() { echo "$*" | tee -a "$out/run.log" >&2; }

work=$(mktemp -d /tmp/sluice-srt-work-XXXXXX)
pids=()
bench_trap_cleanup
mkdir -p "$work/bin" "$work/media"

# --- binaries -----------------------------------------------------------------------------------
if [ -n "${SLUICE_BIN:-}" ] || [ -n "${BENCH_BIN:-}" ]; then
  sluice_src=${SLUICE_BIN:-$root/build/release/server/sluice}
  bench_src=${BENCH_BIN:-$root/build/release/bench/load/sluice-bench}
  commit="given binaries ($sluice_src)"
else
  if [ "$build" = 1 ]; then
    # The tree is shared: someone else's half-saved edit can break the build for a moment.
    for try in 1 2 3 4; do
      make -C "$root" release >"$out/build.log" 2>&1 && break
      [ "$try" = 4 ] && { tail -20 "$out/build.log" >&2; echo "srt.sh: make release failed" >&2; exit 1; }
      log "srt: make release failed (attempt $try), retrying in 30 s"
      sleep 30
    done
  fi
  sluice_src=$root/build/release/server/sluice
  bench_src=$root/build/release/bench/load/sluice-bench
  commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
  dirty=$(git -C "$root" status --porcelain -- server protocol media config bench/load 2>/dev/null | wc -l)
  [ "$dirty" -gt 0 ] && commit="$commit + $dirty uncommitted file(s) in server/ protocol/ media/ config/ bench/load/"
fi
[ -x "$sluice_src" ] && [ -x "$bench_src" ] || { echo "srt.sh: no binaries ($sluice_src, $bench_src): make release" >&2; exit 1; }
# Private copies: every run of one comparison must measure the same binaries.
cp "$sluice_src" "$work/bin/sluice"
cp "$bench_src" "$work/bin/sluice-bench"
sluice="$work/bin/sluice"
bench="$work/bin/sluice-bench"
servers=(sluice)
srs_version=""
if [ -n "${SRS_BIN:-}" ]; then
  [ -x "$SRS_BIN" ] || { echo "srt.sh: SRS_BIN=$SRS_BIN is not executable" >&2; exit 1; }
  cp "$SRS_BIN" "$work/bin/srs"
  srs_version=$("$work/bin/srs" -v 2>&1 | tail -1 || true)
  servers+=(srs)
fi
"$bench" srt-read --help >/dev/null 2>&1 || { echo "srt.sh: $bench_src has no srt-read mode (rebuild it)" >&2; exit 1; }

# --- media: one encode, the same frames as MPEG-TS (SRT) and FLV (RTMP) ---------------------------
media_s=30
log "srt: making ${media_s} s of 1280x720 25 fps H.264 ${media_kbit}k (GOP 2 s) + AAC 128k with noise"
ffmpeg -nostdin -loglevel error -y -f lavfi -i "testsrc2=size=1280x720:rate=25:duration=$media_s" \
  -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=$media_s" -vf noise=alls=20:allf=t \
  -c:v libx264 -preset ultrafast -g 50 -b:v "${media_kbit}k" -maxrate "${media_kbit}k" -bufsize "${media_kbit}k" \
  -pix_fmt yuv420p -c:a aac -b:a 128k -f matroska "$work/media/src.mkv"
ffmpeg -nostdin -loglevel error -y -i "$work/media/src.mkv" -c copy -f mpegts "$work/media/src.ts"
ffmpeg -nostdin -loglevel error -y -i "$work/media/src.mkv" -c copy -f flv "$work/media/src.flv"
ts_bytes=$(stat -c %s "$work/media/src.ts"); flv_bytes=$(stat -c %s "$work/media/src.flv")
case " ${scenarios[*]} " in
  *" fanout500 "*)
    ffmpeg -nostdin -loglevel error -y -f lavfi -i "testsrc2=size=960x540:rate=25:duration=$media_s" \
      -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=$media_s" -vf noise=alls=20:allf=t \
      -c:v libx264 -preset ultrafast -g 50 -b:v 900k -maxrate 900k -bufsize 900k -pix_fmt yuv420p \
      -c:a aac -b:a 96k -f mpegts "$work/media/low.ts" ;;
esac

cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
machine="$(nproc) cores, ${cpu_model:-unknown CPU}, Linux $(uname -r), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
srt_version=$(pkg-config --modversion srt 2>/dev/null || echo unknown)
cat > "$out/meta.json" <<JSON
{"machine": "$machine", "sluice": "$commit", "libsrt": "$srt_version", "srt_latency_ms": $latency,
 "media_s": $media_s, "media_kbit": $media_kbit, "ts_bytes": $ts_bytes, "flv_bytes": $flv_bytes,
 "reps": $reps, "seconds": $seconds, "publishers": $publishers, "readers": $readers,
 "servers": "${servers[*]}", "srs": "$srs_version", "nice": "${BENCH_NICE:-}",
 "scenarios": "${scenarios[*]}", "started": "$(date -u +%Y-%m-%dT%H:%M:%SZ)", "uptime_start": "$(uptime)"}
JSON
log "srt: sluice $commit; libsrt $srt_version; machine: $machine"
[ -z "$srs_version" ] || log "srt: SRS $srs_version ($SRS_BIN)"
log "srt: media: TS $ts_bytes bytes, FLV $flv_bytes bytes for ${media_s} s; srt.latency ${latency} ms"
log "srt: scenarios: ${scenarios[*]}; $reps repetition(s) of ${seconds} s; results in $out"

# --- the server ---------------------------------------------------------------------------------
udp_free_port() {
  "$py" -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
server_pid=""; rtmp_port=""; srt_port=""; server_log=""; server=sluice
start_server() {  # start_server NAME: a fresh server ($server), its log in OUT/server-NAME.log
  rtmp_port=$(bench_free_port); srt_port=$(udp_free_port)
  server_log="$out/server-$1.log"
  if [ "$server" = srs ]; then
    mkdir -p "$work/srs"
    cat > "$work/srs/srs.conf" <<CONF
listen 127.0.0.1:$rtmp_port;
max_connections 10000;
daemon off;
pid $work/srs/srs.pid;
srs_log_tank console;
srs_log_level warn;
http_api { enabled off; }
http_server { enabled off; }
srt_server {
  enabled on;
  listen $srt_port;
  latency $latency;
}
vhost __defaultVhost__ {
  srt { enabled on; srt_to_rtmp on; }
  play { gop_cache on; }
}
CONF
    (cd "$work/srs" && srs_exec ${prio[@]+"${prio[@]}"} "$work/bin/srs" -c "$work/srs/srs.conf") >"$server_log" 2>&1 &
    server_pid=$!; pids+=("$server_pid")
    bench_wait_port "$rtmp_port" 10 || { echo "srt.sh: SRS did not start (log: $server_log)" >&2; tail -5 "$server_log" >&2; exit 1; }
    sleep 0.5  # its SRT listener starts beside the RTMP one
    return
  fi
  local queue
  queue=$(bench_player_queue_keys)
  cat > "$work/sluice.yaml" <<YAML
workers: 1
rtmp:
  listen: 127.0.0.1:$rtmp_port
  chunk_size: 4096
  player_queue: {${queue:+ $queue }}
  io_uring: ${SLUICE_IO_URING:-true}
srt:
  listen: 127.0.0.1:$srt_port
  latency: ${latency}ms
apps:
  live: { type: live }
log:
  level: info
YAML
  ${prio[@]+"${prio[@]}"} "$sluice" --config "$work/sluice.yaml" >"$server_log" 2>&1 &
  server_pid=$!; pids+=("$server_pid")
  bench_wait_port "$rtmp_port" 10 || { echo "srt.sh: the server did not start (log: $server_log)" >&2; tail -5 "$server_log" >&2; exit 1; }
}
stop_server() {
  bench_stop "$server_pid" 10
  server_pid=""
}
sys_busy() { awk '/^cpu / {print $2+$3+$4+$7+$8+$9; exit}' /proc/stat; }
ticks=$(getconf CLK_TCK)

# srt_url MODE NAME: MODE publish or read, NAME in app live. SRS reads the Access Control form only.
srt_url() {
  if [ "$server" = srs ]; then
    echo "srt://127.0.0.1:$srt_port?streamid=%23!::r=live/$2,m=$([ "$1" = read ] && echo request || echo publish)"
  else
    echo "srt://127.0.0.1:$srt_port?streamid=$1:live/$2"
  fi
}
rtmp_url() { echo "rtmp://127.0.0.1:$rtmp_port/live/$1"; }

# measure SCENARIO PROTO REP -- BENCH ARGS...: runs the bench against the running server, its CPU
# from /proc before and after, and records the run (the caller starts and stops the server).
measure() {
  local name=$1 proto=$2 rep=$3; shift 4
  local json="$out/bench-$server-$name-$proto-$rep.json" txt="$out/bench-$server-$name-$proto-$rep.txt"
  local cpu0 cpu1 busy0 busy1 t0 t1 rc=0 note="" load
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  cpu0=$(bench_cpu_ticks "$server_pid"); busy0=$(sys_busy); t0=$(date +%s.%N)
  ${prio[@]+"${prio[@]}"} "$bench" "$@" -q --json "$json" >"$txt" 2>&1 || rc=$?
  t1=$(date +%s.%N); busy1=$(sys_busy)
  if kill -0 "$server_pid" 2>/dev/null; then cpu1=$(bench_cpu_ticks "$server_pid"); else cpu1=$cpu0; note="server died"; fi
  last_record=(server="$server" scenario="$name" proto="$proto" rep="$rep" bench_rc="$rc" cpu_ticks="$(( cpu1 - cpu0 ))"
               busy_ticks="$(( busy1 - busy0 ))" ticks="$ticks" t0="$t0" t1="$t1" loadavg="$load" note="$note")
  last_json=$json
}
record() {  # record [key=value...]: after the server stopped (its log is complete)
  "$py" "$report" record "$out" "$last_json" "$server_log" "${last_record[@]}" "$@"
}

# A background SRT publisher of the fan-out's stream; its PID in $pub.
start_publisher() {  # start_publisher STREAM SECONDS MEDIA
  ${prio[@]+"${prio[@]}"} "$bench" srt-publish -q -d "$2" -f "$work/media/$3.ts" --srt-latency "$latency" "$(srt_url publish "$1")" \
    >"$out/publisher-$1.txt" 2>&1 &
  pub=$!; pids+=("$pub")
  sleep 3  # connected, and a whole GOP (2 s) is in the server's cache
  kill -0 "$pub" 2>/dev/null || { echo "srt.sh: the fan-out's publisher exited early:" >&2; cat "$out/publisher-$1.txt" >&2; exit 1; }
}

# --- scenarios ----------------------------------------------------------------------------------
# perf_start NAME PROTO DELAY PERF: in the background after DELAY s, for 8 s of the server's steady
# state, PERF = stat (syscalls, context switches, CPU: OUT/perf-stat-NAME-PROTO.csv) or record
# (call graphs, reported by perf_report). Its PID in $perf_pid.
perf_start() {
  local name=$1 proto=$2 delay=$3 perf=$4
  ( sleep "$delay"
    if [ "$perf" = stat ]; then
      exec perf stat -x, -o "$out/perf-stat-$name-$proto.csv" -p "$server_pid" \
        -e syscalls:sys_enter_sendmsg -e syscalls:sys_enter_sendmmsg -e syscalls:sys_enter_sendto \
        -e syscalls:sys_enter_writev -e syscalls:sys_enter_write -e syscalls:sys_enter_io_uring_enter \
        -e syscalls:sys_enter_recvmsg -e syscalls:sys_enter_recvfrom -e syscalls:sys_enter_read \
        -e syscalls:sys_enter_futex -e syscalls:sys_enter_epoll_wait -e context-switches -e task-clock -- sleep 8
    else
      exec perf record -g -o "$work/perf-$name-$proto.data" -p "$server_pid" -- sleep 8
    fi ) >"$out/perf-$perf-$name-$proto.log" 2>&1 &
  perf_pid=$!; pids+=("$perf_pid")
}
# perf_report NAME PROTO: the server's profile by thread, by symbol (self) and by symbol with
# children, into OUT/profile-NAME-PROTO*.txt.
perf_report() {
  local data="$work/perf-$1-$2.data" base="$out/profile-$1-$2"
  [ -f "$data" ] || return 0
  perf report -i "$data" --no-children --sort comm -g none --stdio 2>/dev/null | grep -v '^$' | head -30 \
    >"$base-threads.txt" || true
  perf report -i "$data" --no-children --sort dso,symbol -g none --stdio 2>/dev/null | grep -v '^$' | head -80 \
    >"$base.txt" || true
  perf report -i "$data" --children --sort symbol -g none --stdio 2>/dev/null | grep -v '^$' | head -120 \
    >"$base-children.txt" || true
  rm -f "$data"
}

run_ingest() {  # run_ingest REP [PERF]
  local rep=$1 perf=${2:-} proto perf_pid=""
  for proto in srt rtmp; do
    start_server "$server-ingest-$proto-$rep"
    # Steady state: after the ramp (publishers / 10 per second) and a few seconds more.
    [ -z "$perf" ] || perf_start ingest "$proto" $(( publishers / 10 + 3 )) "$perf"
    if [ "$proto" = srt ]; then
      measure ingest srt "$rep" -- srt-publish -n "$publishers" --rate 10 -d "$seconds" -f "$work/media/src.ts" \
        --srt-latency "$latency" --allow-failures "$publishers" "$(srt_url publish 's{i}')"
      sleep 1  # the server logs each connection's close
    else
      measure ingest rtmp "$rep" -- publish -n "$publishers" --rate 10 -d "$seconds" -f "$work/media/src.flv" \
        --allow-failures "$publishers" "$(rtmp_url 'r{i}')"
    fi
    [ -z "$perf_pid" ] || { wait "$perf_pid" || true; perf_pid=""; }
    stop_server
    [ "$perf" != record ] || perf_report ingest "$proto"
    if [ -n "$perf" ]; then record kind="$perf"; else record; fi
  done
}

run_fanout() {  # run_fanout NAME REP [SECONDS [PERF]]: PERF = stat or record (perf_start)
  local name=$1 rep=$2 secs=${3:-$seconds} perf=${4:-} proto perf_pid="" n=$readers media=src
  [ "$name" = fanout500 ] && { n=500; media=low; }
  for proto in srt rtmp; do
    start_server "$server-$name-$proto-$rep"
    start_publisher cam $(( secs + 10 )) "$media"
    # Steady state: after the ramp (readers / 200 per second) and a few seconds more.
    [ -z "$perf" ] || perf_start "$name" "$proto" $(( n / 200 + 4 )) "$perf"
    if [ "$proto" = srt ]; then
      measure "$name" srt "$rep" -- srt-read -n "$n" --rate 200 -d "$secs" --srt-latency "$latency" --srt-ports 4 \
        --allow-failures "$n" "$(srt_url read cam)"
    else
      measure "$name" rtmp "$rep" -- play -n "$n" --rate 200 -d "$secs" --read-batch-ms 0 \
        --allow-failures "$n" "$(rtmp_url cam)"
    fi
    [ -z "$perf_pid" ] || { wait "$perf_pid" || true; perf_pid=""; }
    bench_stop "$pub"
    sleep 0.5
    stop_server
    [ "$perf" != record ] || perf_report "$name" "$proto"
    if [ -n "$perf" ]; then record kind="$perf"; else record; fi
  done
}

run_delay() {
  local rep=$1
  start_server "$server-delay-$rep"
  measure delay srt "$rep" -- latency -n 20 -d "$seconds" -f "$work/media/src.ts" --srt-latency "$latency" \
    --allow-failures 20 --publish "$(srt_url publish lat)" "$(rtmp_url lat)"
  local srt_record=("${last_record[@]}") srt_json=$last_json
  measure delay rtmp "$rep" -- latency -n 20 -d "$seconds" -f "$work/media/src.flv" --allow-failures 20 \
    "$(rtmp_url lat2)"
  stop_server
  "$py" "$report" record "$out" "$srt_json" "$server_log" "${srt_record[@]}"
  record
}

t_start=$(date +%s)
for rep in $(seq 1 "$reps"); do
  for name in "${scenarios[@]}"; do
    case "$name" in
      ingest|fanout|fanout500|delay)
        for server in "${servers[@]}"; do
          [ "$server" = srs ] && [ "$name" = delay ] && continue
          log "srt: $server $name, repetition $rep, load $(cut -d' ' -f1-3 /proc/loadavg)"
          case "$name" in fanout*) run_fanout "$name" "$rep" ;; *) "run_$name" "$rep" ;; esac
        done ;;
    esac
  done
done
server=sluice
for name in "${scenarios[@]}"; do
  case "$name" in
    syscalls)
      log "srt: syscalls (perf stat), load $(cut -d' ' -f1-3 /proc/loadavg)"
      run_ingest 0 stat; run_fanout fanout 0 14 stat ;;
    profile)
      log "srt: profile (perf record), load $(cut -d' ' -f1-3 /proc/loadavg)"
      run_ingest -1 record; run_fanout fanout -1 16 record ;;
  esac
done
log "srt: done in $(( $(date +%s) - t_start )) s; load at end: $(uptime)"
"$py" "$report" report "$out" | tee "$out/report.md"
echo "(per-run logs, bench summaries and JSON: $out)"
