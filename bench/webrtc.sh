#!/usr/bin/env bash
# WHEP players against RTMP players of the same stream on one Sluice worker loop (`workers: 1`),
# with sluice-bench's `whep` and `play` modes (bench/load/README.md). Each run gets a fresh server
# and a fresh ffmpeg publisher; WHEP and RTMP runs alternate within each repetition; the server's
# CPU comes from /proc/PID/stat (all its threads), its memory from /proc/PID/status.
# docs/benchmarks.md, section "WebRTC: 200 WHEP players", explains the method and holds the figures.
#
# Usage: bench/webrtc.sh [--reps N] [--seconds S] [--players N] [--rate R] [--out DIR] [--no-build]
#                        [SCENARIO...]
# Scenarios (default: fanout cm scale syscalls profile floor; about 21 minutes with 3 repetitions):
#   fanout    PLAYERS (200) WHEP players (`whep`: the browser's offer, GCM first) then PLAYERS RTMP
#             players (`play --read-batch-ms 0`) of one ~2.6 Mb/s 720p stream, ramp RATE (20) a
#             second, SECONDS (60) each. Per run: the server's CPU-s per GB the players received, its
#             RSS per player ((RSS near the end - RSS before the players) / PLAYERS), freezes (WHEP:
#             no new frame for 500 ms) and stalls (RTMP), time to first frame, RTP loss.
#             Bar: no freeze, WHEP CPU-s/GB <= 2.5x RTMP.
#   cm        the WHEP run again with SRTP_AES128_CM_SHA1_80 only (the profile every endpoint must
#             have; browsers get AES-GCM), against the fanout's RTMP runs.
#   scale     WHEP runs of 50, 100 and 150 players (40 s each; not repeated): where the one loop
#             stops keeping up (freezes), and the server's CPU per player below that.
#   syscalls  one WHEP and one RTMP run (40 s) with `perf stat` counting the server's system calls
#             (sendmsg, sendmmsg, io_uring_enter, ...), context switches and CPU over 10 s of steady
#             state: what sendmmsg or UDP GSO would save (not repeated).
#   profile   the same WHEP run, then an RTMP run, under `perf record -g` (10 s); the server's
#             profile by symbol, and the shares of the send path, SRTP, packetisation, the Opus
#             encoder and the loopback delivery into the players' sockets (net_rx_action: the
#             receivers' work, done in the sender's context on loopback), go to
#             OUT/profile-{whep,rtmp}*.txt (not repeated).
#   floor     bench/udp_floor.c, no server: the kernel's cost of the same datagrams (PLAYERS receivers,
#             the media's rate, 1200 bytes) sent one sendmsg each, in sendmmsg batches of 64, and
#             with UDP GSO; 3 repetitions of 15 s each. What sendmmsg or GSO would save at most.
# --reps N: repetitions of fanout and cm (default 3). --out DIR: where results go (default
# /tmp/sluice-webrtc-DATE; kept). Sluice is the working tree's release build (`flock
# /tmp/sluice-release.lock make release`, then copied so a concurrent rebuild cannot change it
# mid-run); --no-build uses build/release as it is. SLUICE_BIN and BENCH_BIN name other binaries
# and skip the build.
# Environment: WEBRTC_MEDIA_KBIT (default 2500): the video bitrate (AAC 128k is added).
# SRS_BIN: an SRS built with WebRTC (see docs/benchmarks.md for the build): the fanout scenario also
# runs against it (its WHEP is POST /rtc/v1/whep/?app=live&stream=cam on its HTTP API port; it
# offers AES128_CM_SHA1_80 only, so its WHEP runs are AES-CM whatever the players offer).
# BENCH_NICE (e.g. -10): run the server, publisher and bench at that nice level; BENCH_CHRT (e.g. 1):
# with that round-robin real-time priority instead (on a machine where other jobs run real-time).
# BENCH_SPLIT=1 (root; Sluice only): the players as if on another machine. The bench runs in a
# network namespace of its own behind a veth pair, pinned to CPU 1, the server pinned to CPU 0,
# and the players' side of every datagram and segment (the kernel's receive path, which on
# loopback runs in the sender's context and is charged to it) is steered to CPU 1 by RPS on the
# players' veth; what the server receives is steered to CPU 0. The server's CPU is then its own
# work, as with players on a network (docs/benchmarks.md, "Players as if on another machine").
# Every run is bounded (SECONDS plus a few seconds of set-up), on 127.0.0.1 or the veth pair.
set -euo pipefail

all_scenarios=(fanout cm scale syscalls profile floor)
reps=3
seconds=60
players=200
rate=20
out=""
build=1
scenarios=()
usage() { sed -n '2,50p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --players) players=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) usage 0 ;;
    -*) echo "webrtc.sh: unknown option $1" >&2; usage ;;
    *) scenarios+=("$1"); shift ;;
  esac
done
[ ${#scenarios[@]} -gt 0 ] || scenarios=("${all_scenarios[@]}")
has() { case " ${scenarios[*]} " in *" $1 "*) return 0 ;; esac; return 1; }
for s in "${scenarios[@]}"; do
  case " ${all_scenarios[*]} " in *" $s "*) ;; *) echo "webrtc.sh: unknown scenario $s" >&2; exit 2 ;; esac
done
for v in "$reps" "$seconds" "$players" "$rate"; do
  case "$v" in ''|*[!0-9]*|0) echo "webrtc.sh: --reps, --seconds, --players and --rate take positive integers" >&2; exit 2 ;; esac
done
[ "$seconds" -ge 20 ] && [ "$seconds" -le 300 ] || { echo "webrtc.sh: --seconds is 20..300" >&2; exit 2; }
prio=()
[ -z "${BENCH_NICE:-}" ] || prio=(nice -n "$BENCH_NICE")
[ -z "${BENCH_CHRT:-}" ] || prio=(chrt -r "$BENCH_CHRT")
media_kbit=${WEBRTC_MEDIA_KBIT:-2500}
split=${BENCH_SPLIT:-0}
host=127.0.0.1         # where the players reach the server
server_pin=(); bench_pin=()

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
py=/usr/bin/python3
[ -x "$py" ] || py=python3
[ -n "$out" ] || out="/tmp/sluice-webrtc-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
out=$(cd "$out" && pwd)
log() { echo "$*" | tee -a "$out/run.log" >&2; }

work=$(mktemp -d /tmp/sluice-webrtc-work-XXXXXX)
pids=()
bench_trap_cleanup

# --- BENCH_SPLIT=1: the players behind a veth pair, their receive path on the other CPU -----------
netns=""
if [ "$split" = 1 ]; then
  [ "$(id -u)" -eq 0 ] || { echo "webrtc.sh: BENCH_SPLIT=1 needs root (a network namespace)" >&2; exit 1; }
  [ "$(nproc)" -ge 2 ] || { echo "webrtc.sh: BENCH_SPLIT=1 needs 2 CPUs" >&2; exit 1; }
  [ -z "${SRS_BIN:-}" ] || { echo "webrtc.sh: BENCH_SPLIT=1 runs Sluice only" >&2; exit 1; }
  netns="sluice-wb-$$"; net=$(( $$ % 200 + 20 ))
  ip netns add "$netns"
  trap 'bench_cleanup; ip netns del "$netns" 2>/dev/null || true' EXIT
  ip link add "wbs$net" type veth peer name "wbp$net" netns "$netns"
  ip addr add "10.211.$net.1/24" dev "wbs$net"; ip link set "wbs$net" up
  ip netns exec "$netns" sh -c "ip addr add 10.211.$net.2/24 dev wbp$net && ip link set wbp$net up && ip link set lo up &&
    echo 2 > /sys/class/net/wbp$net/queues/rx-0/rps_cpus"
  echo 1 > "/sys/class/net/wbs$net/queues/rx-0/rps_cpus"
  host="10.211.$net.1"; listen_any=0.0.0.0
  server_pin=(taskset -c 0); bench_pin=(ip netns exec "$netns" taskset -c 1)
fi
mkdir -p "$work/bin" "$work/media"

# --- binaries -----------------------------------------------------------------------------------
if [ -n "${SLUICE_BIN:-}" ] || [ -n "${BENCH_BIN:-}" ]; then
  sluice_src=${SLUICE_BIN:-$root/build/release/server/sluice}
  bench_src=${BENCH_BIN:-$root/build/release/bench/load/sluice-bench}
  commit="given binaries ($sluice_src)"
  cp "$sluice_src" "$work/bin/sluice"
  cp "$bench_src" "$work/bin/sluice-bench"
else
  if [ "$build" = 1 ]; then
    # The tree is shared: someone else's half-saved edit can break the build for a moment.
    for try in 1 2 3 4; do
      flock /tmp/sluice-release.lock make -C "$root" release >"$out/build.log" 2>&1 && break
      [ "$try" = 4 ] && { tail -20 "$out/build.log" >&2; echo "webrtc.sh: make release failed" >&2; exit 1; }
      log "webrtc: make release failed (attempt $try), retrying in 30 s"
      sleep 30
    done
  fi
  # Private copies, taken under the build's lock: every run of one comparison measures the same
  # binaries.
  flock /tmp/sluice-release.lock cp "$root/build/release/server/sluice" "$root/build/release/bench/load/sluice-bench" \
    "$work/bin/"
  commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
  dirty=$(git -C "$root" status --porcelain -- server protocol media config bench/load 2>/dev/null | wc -l)
  [ "$dirty" -gt 0 ] && commit="$commit + $dirty uncommitted file(s) in server/ protocol/ media/ config/ bench/load/"
fi
sluice="$work/bin/sluice"
bench="$work/bin/sluice-bench"
srs_version=""
if [ -n "${SRS_BIN:-}" ]; then
  [ -x "$SRS_BIN" ] || { echo "webrtc.sh: SRS_BIN=$SRS_BIN is not executable" >&2; exit 1; }
  srs_version=$("$SRS_BIN" -v 2>&1 | tail -1 || true)
fi
"$bench" whep --help >/dev/null 2>&1 || { echo "webrtc.sh: $bench has no whep mode (rebuild it)" >&2; exit 1; }

# --- media: long enough that the publisher never loops within a run ------------------------------
media_s=$(( seconds + 30 ))
flv_bytes=0
if [ "${scenarios[*]}" != floor ]; then
  log "webrtc: making ${media_s} s of 1280x720 25 fps H.264 ${media_kbit}k (GOP 2 s, no B-frames) + AAC 128k with noise"
  ffmpeg -nostdin -loglevel error -y -f lavfi -i "testsrc2=size=1280x720:rate=25:duration=$media_s" \
    -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=$media_s" -vf noise=alls=20:allf=t \
    -c:v libx264 -preset ultrafast -tune zerolatency -bf 0 -g 50 -b:v "${media_kbit}k" -maxrate "${media_kbit}k" \
    -bufsize "${media_kbit}k" -pix_fmt yuv420p -c:a aac -b:a 128k -f flv "$work/media/src.flv"
  flv_bytes=$(stat -c %s "$work/media/src.flv")
fi

cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
machine="$(nproc) cores, ${cpu_model:-unknown CPU}, Linux $(uname -r), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
cat > "$out/meta.json" <<JSON
{"machine": "$machine", "sluice": "$commit", "media_s": $media_s, "media_kbit": $media_kbit,
 "flv_bytes": $flv_bytes, "reps": $reps, "seconds": $seconds, "players": $players, "rate": $rate,
 "nice": "${BENCH_NICE:-}", "split": "$split", "chrt": "${BENCH_CHRT:-}", "srs": "$srs_version", "scenarios": "${scenarios[*]}", "started": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
 "uptime_start": "$(uptime)"}
JSON
log "webrtc: sluice $commit; machine: $machine"
log "webrtc: media $flv_bytes bytes for ${media_s} s; scenarios: ${scenarios[*]}; $reps repetition(s) of ${seconds} s; results in $out"

# --- the server and its publisher -----------------------------------------------------------------
udp_free_port() {
  "$py" -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
server_pid=""; pub_pid=""; rtmp_port=""; http_port=""; udp_port=""; server_log=""; server=sluice
start_server() {  # start_server NAME: a fresh server ($server) and publisher; its log in OUT/server-NAME.log
  local queue
  rtmp_port=$(bench_free_port); http_port=$(bench_free_port); udp_port=$(udp_free_port)
  server_log="$out/server-$1.log"
  if [ "$server" = srs ]; then
    start_srs
    start_publisher "$1"
    return
  fi
  queue=$(bench_player_queue_keys)
  cat > "$work/sluice.yaml" <<YAML
workers: 1
rtmp:
  listen: ${listen_any:-127.0.0.1}:$rtmp_port
  chunk_size: 4096
  player_queue: {${queue:+ $queue }}
  io_uring: ${SLUICE_IO_URING:-true}
http:
  listen: ${listen_any:-127.0.0.1}:$http_port
webrtc:
  listen: $host:$udp_port
apps:
  live: { type: live }
log:
  level: info
YAML
  ${prio[@]+"${prio[@]}"} ${server_pin[@]+"${server_pin[@]}"} "$sluice" --config "$work/sluice.yaml" >"$server_log" 2>&1 &
  server_pid=$!; pids+=("$server_pid")
  bench_wait_port "$rtmp_port" 10 && bench_wait_port "$http_port" 10 ||
    { echo "webrtc.sh: the server did not start (log: $server_log)" >&2; tail -5 "$server_log" >&2; exit 1; }
  start_publisher "$1"
}
# SRS with WebRTC: RTMP, its HTTP API (WHEP), its UDP port; rtmp_to_rtc turns AAC into Opus.
start_srs() {
  mkdir -p "$work/srs"
  cat > "$work/srs/srs.conf" <<CONF
listen 127.0.0.1:$rtmp_port;
max_connections 10000;
daemon off;
pid $work/srs/srs.pid;
srs_log_tank console;
srs_log_level warn;
http_server { enabled off; }
http_api { enabled on; listen 127.0.0.1:$http_port; }
rtc_server { enabled on; listen $udp_port; candidate 127.0.0.1; }
vhost __defaultVhost__ {
  rtc { enabled on; rtmp_to_rtc on; rtc_to_rtmp off; }
  play { gop_cache on; }
}
CONF
  # SRS reads SRS_* variables as overrides of its configuration: none may leak in.
  (cd "$work/srs" && exec env -i PATH=/usr/bin:/bin ${prio[@]+"${prio[@]}"} "$SRS_BIN" -c "$work/srs/srs.conf") \
    >"$server_log" 2>&1 &
  server_pid=$!; pids+=("$server_pid")
  bench_wait_port "$rtmp_port" 10 && bench_wait_port "$http_port" 10 ||
    { echo "webrtc.sh: SRS did not start (log: $server_log)" >&2; tail -5 "$server_log" >&2; exit 1; }
}
start_publisher() {  # start_publisher NAME
  ${prio[@]+"${prio[@]}"} ffmpeg -nostdin -loglevel error -re -i "$work/media/src.flv" -c copy -f flv \
    "rtmp://127.0.0.1:$rtmp_port/live/cam" >"$out/publisher-$1.log" 2>&1 &
  pub_pid=$!; pids+=("$pub_pid")
  sleep 3  # live, and a whole GOP (2 s) is in the server's cache
  kill -0 "$pub_pid" 2>/dev/null || { echo "webrtc.sh: the publisher exited early:" >&2; cat "$out/publisher-$1.log" >&2; exit 1; }
}
stop_server() {
  bench_stop "$pub_pid"
  bench_stop "$server_pid" 10
  server_pid=""; pub_pid=""
}
ticks=$(getconf CLK_TCK)

# perf_start NAME DELAY PERF: in the background after DELAY s, 10 s of the server's steady state:
# PERF = stat (OUT/perf-stat-NAME.csv) or record (reported by perf_report). Its PID in $perf_pid.
perf_pid=""
perf_start() {
  local name=$1 delay=$2 perf=$3
  ( sleep "$delay"
    if [ "$perf" = stat ]; then
      exec perf stat -x, -o "$out/perf-stat-$name.csv" -p "$server_pid" \
        -e syscalls:sys_enter_sendmsg -e syscalls:sys_enter_sendmmsg -e syscalls:sys_enter_sendto \
        -e syscalls:sys_enter_writev -e syscalls:sys_enter_write -e syscalls:sys_enter_io_uring_enter \
        -e syscalls:sys_enter_recvmsg -e syscalls:sys_enter_recvmmsg -e syscalls:sys_enter_read \
        -e syscalls:sys_enter_epoll_wait -e syscalls:sys_enter_futex -e context-switches -e task-clock -- sleep 10
    else
      exec perf record -g -o "$work/perf-$name.data" -p "$server_pid" -- sleep 10
    fi ) >"$out/perf-$perf-$name.log" 2>&1 &
  perf_pid=$!; pids+=("$perf_pid")
}
# perf_report NAME: the profile by symbol (self, and with children) into OUT/profile-NAME*.txt,
# and the shares of the paths the report names (OUT/profile-NAME-paths.txt).
perf_report() {
  local data="$work/perf-$1.data" base="$out/profile-$1"
  [ -f "$data" ] || return 0
  perf report -i "$data" --no-children --sort dso,symbol -g none --stdio 2>/dev/null | grep -v '^$' | head -80 \
    >"$base.txt" || true
  perf report -i "$data" --children --sort symbol -g none --stdio 2>/dev/null | grep -v '^$' >"$base-children-all.txt" || true
  head -150 "$base-children-all.txt" >"$base-children.txt"
  # Children shares of the send path (the system call and what is under it), SRTP, packetisation
  # and the audio bridge; a symbol may be missing from a build (inlined) or a kernel (renamed).
  grep -E '\] (__libc_sendmsg|sendmsg|__sys_sendmsg|___sys_sendmsg|__x64_sys_sendmsg|udp_sendmsg|ip_make_skb|udp_send_skb|ip_finish_output2|__dev_queue_xmit|loopback_xmit|__local_bh_enable_ip|do_softirq|net_rx_action|__udp4_lib_rcv|sock_def_readable|entry_SYSCALL_64|syscall_exit_to_user_mode|srtp_protect|srtp_protect_mki|srtp_aes_gcm_openssl_encrypt|.*H264Packetizer.*packetize.*|.*packetize.*|.*AacToOpus.*|opus_encode.*|.*SrtpSession::protect_rtp.*|.*WhepPlayer::.*|.*UdpPort::send.*|uv_udp_try_send|uv__udp_try_send|.*RtmpOutput.*|io_uring.*|tcp_sendmsg.*|tcp_v4_rcv|tcp_rcv_established) ' \
    "$base-children-all.txt" | head -60 >"$base-paths.txt" || true
  rm -f "$data"
}

# measure PROTO REP [PROFILES]: PLAYERS players against the running server; its CPU over the
# bench's run, its RSS before the players and near the end; one JSON line in OUT/runs.jsonl.
measure() {
  local proto=$1 rep=$2 profiles=${3:-} json txt cpu0 cpu1 t0 t1 rss0 rss1 hwm load rc=0 url args=()
  json="$out/bench-$proto-$rep.json"; txt="$out/bench-$proto-$rep.txt"
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  local whep_url="http://$host:$http_port/live/cam/whep" sched0 sched1 recvq
  [ "$server" = srs ] && whep_url="http://127.0.0.1:$http_port/rtc/v1/whep/?app=live&stream=cam"
  case "$proto" in
    *rtmp) args=(play --read-batch-ms 0 "rtmp://$host:$rtmp_port/live/cam") ;;
    *) args=(whep ${profiles:+--srtp-profiles "$profiles"} "$whep_url") ;;
  esac
  rss0=$(bench_rss "$server_pid"); cpu0=$(bench_cpu_ticks "$server_pid"); t0=$(date +%s.%N)
  # The loop thread's time on a CPU and waiting for one (ns): busy, or starved by other work?
  sched0=$(cut -d' ' -f1-2 "/proc/$server_pid/schedstat")
  ${prio[@]+"${prio[@]}"} ${bench_pin[@]+"${bench_pin[@]}"} "$bench" "${args[0]}" -n "$players" --rate "$rate" -d "$seconds" --allow-failures "$players" \
    -q --json "$json" "${args[@]:1}" >"$txt" 2>&1 &
  local bench_pid=$!; pids+=("$bench_pid")
  sleep $(( seconds - 8 ))  # all players in, a while before the end
  rss1=$(bench_rss "$server_pid" 2>/dev/null || echo 0)
  # Datagrams the server has not read yet (bytes of its UDP socket's receive queue).
  recvq=$(ss -uanH "sport = :$udp_port" 2>/dev/null | awk '{s += $2} END {print s + 0}')
  wait "$bench_pid" || rc=$?
  t1=$(date +%s.%N)
  if kill -0 "$server_pid" 2>/dev/null; then
    cpu1=$(bench_cpu_ticks "$server_pid"); hwm=$(bench_hwm "$server_pid"); sched1=$(cut -d' ' -f1-2 "/proc/$server_pid/schedstat")
  else
    cpu1=$cpu0; hwm=0; sched1=$sched0
  fi
  sleep 1  # the DELETEs' session closes are logged
  "$py" - "$json" "$server_log" "$proto" "$rep" "$rc" "$(( cpu1 - cpu0 ))" "$ticks" "$t0" "$t1" "$rss0" "$rss1" \
    "$hwm" "$load" "$players" "$server" "$sched0" "$sched1" "$recvq" >>"$out/runs.jsonl" <<'PY'
import json, re, sys
path, log, proto, rep, rc, cpu_ticks, ticks, t0, t1, rss0, rss1, hwm, load, players, server, s0, s1, recvq = sys.argv[1:]
run0, wait0 = (int(x) for x in s0.split())
run1, wait1 = (int(x) for x in s1.split())
try:
    b = json.load(open(path))
except (OSError, ValueError):
    b = {}
p = b.get("players", {})
w = b.get("whep", {})
sent = 0
for line in open(log, errors="replace"):
    if "event=webrtc_close" in line:
        m = re.search(r" bytes_out=(\d+)", line)
        sent += int(m.group(1)) if m else 0
cpu_s = int(cpu_ticks) / int(ticks)
gb = p.get("bytes_in", 0) / 1e9
print(json.dumps({
    "proto": proto, "rep": int(rep) if rep.isdigit() else rep, "bench_rc": int(rc), "server_cpu_s": cpu_s, "elapsed_s": float(t1) - float(t0),
    "bytes_in": p.get("bytes_in", 0), "cpu_s_per_gb": cpu_s / gb if gb else None,
    "rss_idle_kb": int(rss0), "rss_loaded_kb": int(rss1), "hwm_kb": int(hwm),
    "rss_per_player_kb": (int(rss1) - int(rss0)) / int(players) if int(rss1) else None,
    "ok": p.get("ok"), "failed": p.get("failed"), "failure_reasons": p.get("failure_reasons"),
    "stalls": p.get("stalls"), "clients_with_stalls": p.get("clients_with_stalls"),
    "ttff_ms": p.get("ttff_ms"), "server_webrtc_bytes_out": sent,
    "video_lost": w.get("video_lost"), "video_packets": w.get("video_packets"), "audio_lost": w.get("audio_lost"),
    "frames_incomplete": w.get("frames_incomplete"), "max_frame_gap_ms": w.get("max_frame_gap_ms"),
    "dtls": w.get("dtls"), "deletes": w.get("deletes"),
    "bench_cpu_s": b.get("bench_cpu", {}).get("total_s"), "bench_lag_max_ms": b.get("bench_cpu", {}).get("loop_lag_max_ms"),
    "loadavg": load, "players": int(players), "server": server,
    "loop_busy": (run1 - run0) / 1e9 / (float(t1) - float(t0)), "loop_runqueue_wait_s": (wait1 - wait0) / 1e9,
    "udp_recv_queue_bytes": int(recvq)}))
PY
}

run_pair() {  # run_pair REP PROTO...: each PROTO on a fresh server; srs-* on SRS
  local rep=$1 proto; shift
  for proto in "$@"; do
    server=sluice
    case "$proto" in srs-*) server=srs ;; esac
    log "webrtc: $proto, repetition $rep, load $(cut -d' ' -f1-3 /proc/loadavg)"
    start_server "$proto-$rep"
    case "$proto" in
      whep-cm) measure "$proto" "$rep" SRTP_AES128_CM_SHA1_80 ;;
      *) measure "$proto" "$rep" ;;
    esac
    stop_server
  done
  server=sluice
}

run_perf() {  # run_perf PERF PROTO: one run of 40 s with perf from the steady state on
  local perf=$1 proto=$2 keep=$seconds
  log "webrtc: $proto under perf $perf, load $(cut -d' ' -f1-3 /proc/loadavg)"
  seconds=40
  start_server "$proto-perf-$perf"
  perf_start "$proto" $(( players / rate + 8 )) "$perf"
  measure "$proto" "perf-$perf"
  wait "$perf_pid" || true
  stop_server
  [ "$perf" != record ] || perf_report "$proto"
  seconds=$keep
}

t_start=$(date +%s)
for rep in $(seq 1 "$reps"); do
  protos=()
  has fanout && protos+=(whep rtmp)
  has cm && protos+=(whep-cm)
  has fanout && [ -n "$srs_version" ] && protos+=(srs-whep srs-rtmp)
  [ ${#protos[@]} -eq 0 ] || run_pair "$rep" "${protos[@]}"
done
if has scale; then
  keep_players=$players keep_seconds=$seconds
  seconds=40
  for players in 50 100 150; do
    log "webrtc: scale, $players WHEP players, load $(cut -d' ' -f1-3 /proc/loadavg)"
    start_server "whep-$players"
    measure "whep-$players" scale
    stop_server
  done
  players=$keep_players seconds=$keep_seconds
fi
has syscalls && { run_perf stat whep; run_perf stat rtmp; }
if has floor; then
  cc -O2 -o "$work/udp_floor" "$root/bench/udp_floor.c"
  for rep in 1 2 3; do
    for mode in sendmsg sendmmsg gso; do
      log "webrtc: udp floor, $mode, repetition $rep, load $(cut -d' ' -f1-3 /proc/loadavg)"
      ${prio[@]+"${prio[@]}"} "$work/udp_floor" -n "$players" -d 15 -r "$media_kbit" -m "$mode" >>"$out/floor.txt"
    done
  done
fi
has profile && { run_perf record whep; run_perf record rtmp; }
log "webrtc: done in $(( $(date +%s) - t_start )) s; load at end: $(uptime)"

# --- report: medians over the repetitions ---------------------------------------------------------
"$py" - "$out" <<'PY' | tee "$out/report.md"
import json, os, statistics, sys
out = sys.argv[1]
meta = json.load(open(os.path.join(out, "meta.json")))
runs_path = os.path.join(out, "runs.jsonl")
runs = [json.loads(l) for l in open(runs_path) if l.strip()] if os.path.exists(runs_path) else []
def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None
def f(v, d=2):
    return "-" if v is None else f"{v:,.{d}f}"
by = {}
for r in runs:
    if str(r["rep"]).startswith("perf") or r["rep"] == "scale":
        continue
    by.setdefault(r["proto"], []).append(r)
print(f"# WebRTC: {meta['players']} WHEP players against RTMP players\n")
print(f"sluice {meta['sluice']}; {meta['machine']}; {meta['seconds']} s runs, ramp {meta['rate']}/s, "
      f"media {meta['media_kbit']}k + AAC 128k\n")
print("| run | rep | server CPU-s | GB received | CPU-s/GB | RSS/player KiB | ok/failed | freezes-stalls (players) | "
      "TTFF p50/p90 ms | video lost | loop busy / runqueue wait s | UDP queue KB | bench CPU-s | load |")
print("| --- | --- | ---: | ---: | ---: | ---: | --- | --- | --- | --- | --- | ---: | ---: | --- |")
for r in runs:
    t = r.get("ttff_ms") or {}
    lost = "-" if r.get("video_packets") is None else f"{r['video_lost']}/{r['video_packets']}"
    print(f"| {r['proto']} | {r['rep']} | {f(r['server_cpu_s'])} | {f(r['bytes_in'] / 1e9, 3)} | {f(r['cpu_s_per_gb'])} | "
          f"{f(r['rss_per_player_kb'], 1)} | {r['ok']}/{r['failed']} | {r['stalls']} ({r['clients_with_stalls']}) | "
          f"{f(t.get('p50'), 0)}/{f(t.get('p90'), 0)} | {lost} | {f(r.get('loop_busy'))} / {f(r.get('loop_runqueue_wait_s'), 1)} | "
          f"{f((r.get('udp_recv_queue_bytes') or 0) / 1000, 0)} | {f(r['bench_cpu_s'], 1)} | {r['loadavg']} |")
print("\n| protocol | runs | CPU-s/GB (median) | / RTMP | RSS per player KiB | freezes or stalls | TTFF p50 ms |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
rtmp = med([r["cpu_s_per_gb"] for r in by.get("rtmp", [])])
srs_rtmp = med([r["cpu_s_per_gb"] for r in by.get("srs-rtmp", [])])
for proto, rs in sorted(by.items()):
    c = med([r["cpu_s_per_gb"] for r in rs])
    base = srs_rtmp if proto.startswith("srs-") else rtmp  # each server against its own RTMP
    ratio = c / base if c is not None and base else None
    print(f"| {proto} | {len(rs)} | {f(c)} | {f(ratio)}x | {f(med([r['rss_per_player_kb'] for r in rs]), 1)} | "
          f"{sum(r['stalls'] or 0 for r in rs)} | {f(med([(r.get('ttff_ms') or {}).get('p50') for r in rs]), 0)} |")
floor = {}
if os.path.exists(os.path.join(out, "floor.txt")):
    for line in open(os.path.join(out, "floor.txt")):
        kv = dict(x.split("=", 1) for x in line.split())
        floor.setdefault(kv["mode"], []).append(kv)
if floor:
    print("\nUDP floor (bench/udp_floor.c, medians): one writer, the same datagrams to the players' sockets")
    print("| mode | calls per datagram | us per datagram | CPU-s/GB | lost |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for mode, rs in floor.items():
        calls = med([int(r["calls"]) / max(int(r["sent"]), 1) for r in rs])
        print(f"| {mode} | {f(calls, 3)} | {f(med([float(r['us_per_datagram']) for r in rs]))} | "
              f"{f(med([float(r['cpu_s_per_gb']) for r in rs]))} | "
              f"{sum(int(r['sent']) - int(r['received']) for r in rs)} |")
for name in ("whep", "rtmp"):
    path = os.path.join(out, f"perf-stat-{name}.csv")
    if not os.path.exists(path):
        continue
    print(f"\nperf stat, {name}, 10 s of steady state (per second):")
    for line in open(path):
        parts = line.strip().split(",")
        if len(parts) > 2 and parts[0] and parts[0][0].isdigit():
            if parts[2] == "task-clock":  # ms of CPU
                print(f"  CPU: {float(parts[0]) / 10 / 1000:.2f} cores")
            else:
                print(f"  {parts[2].replace('syscalls:sys_enter_', '')}: {float(parts[0]) / 10:,.0f}")
PY
echo "(per-run logs, bench summaries and JSON: $out)"
