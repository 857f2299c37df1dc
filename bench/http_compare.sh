#!/usr/bin/env bash
# HTTP side by side: Sluice (release build, one worker loop) and nginx (Debian nginx, one process,
# sendfile on) serving the same files from the same directory on loopback, alternating sluice,
# nginx, sluice, nginx... for REPS repetitions; prints per-run lines and tables of medians with the
# Sluice/nginx ratios. docs/benchmarks.md (section "HTTP") explains the method and holds the
# latest table.
#
# Usage: bench/http_compare.sh [--reps N] [--quick] [--out DIR] [--no-build | --build-dir DIR] [SCENARIO...]
#        bench/http_compare.sh --list
# Scenarios (default: all, in this order; about 13 minutes with 3 repetitions):
#   small     wrk, one 4 KiB file, keep-alive, 50 connections, 10 s: requests/s, server CPU per request
#   small-close  the same, one request per connection (wrk -H "Connection: close": it reconnects)
#   tiny, tiny-close  the same with a 9-byte file (the seeds' httperf/ab measure)
#   notfound  the same (keep-alive) for a file that does not exist: both answer 404
#   api       Sluice: wrk on GET /api/v1/streams with 20 live streams (sluice-bench publish, 64 kb/s
#             each, started first; its CPU is not counted), checked to list 20; beside nginx's
#             4 KiB file (small) in the same repetition, the issue's yardstick for a dynamic answer
#   large     4 parallel curl downloads of one 1 GiB file to /dev/null: MB/s, server CPU-s per GB
#   upload    curl -T of a 1 GiB file (PUT, Authorization: Bearer): MB/s, server CPU-s per GB
#             (nginx: core dav_methods PUT, when its build has the dav module)
#   flv200    Sluice only: 200 HTTP-FLV readers (sluice-bench http-flv) of one live stream, beside
#   flv1000   200 / 1000 RTMP players (sluice-bench play) of the same stream: CPU-s/GB, RSS per reader
# --quick: 1 repetition, 4 s wrk, 256 MiB files, 8 s FLV runs, scenarios small small-close tiny
#   tiny-close large upload flv200 unless named (a smoke test, about 3 minutes).
# --reps N: repetitions (default 3). --connections C (wrk, default 50). --small-seconds S (default 10).
# --large-mib M (default 1024), --downloads N (parallel, default 4), --upload-mib M (default 1024),
# --flv-seconds S (default 20). --out DIR: where results go (default /tmp/sluice-http-DATE; kept).
# --quota CORES: each server runs in a CPU cgroup with this quota (root or sudo). Without it a
#   server that needs less than wrk's one thread can give is measured by the client's speed (one
#   request per connection, where wrk pays the client's half of every set-up); with the same quota
#   for both (e.g. 0.4) requests/s compares the servers.
# Sluice is the working tree's release build (make release, then copied so a concurrent rebuild
# cannot change it mid-run); --no-build uses build/release as it is; --build-dir DIR takes
# DIR/server/sluice and DIR/bench/load/sluice-bench.
# Installs nginx, wrk, curl, ffmpeg with apt-get when missing. Every run is bounded (wrk and
# sluice-bench by their duration, curl by --max-time), all traffic is on 127.0.0.1, and only the
# processes this script started are stopped (by PID).
set -euo pipefail

all_scenarios=(small small-close tiny tiny-close notfound api large upload flv200 flv1000)
reps=3
reps_given=0
quick=0
out=""
build=1
build_dir=""
connections=50
quota=""
small_s=""
large_mib=""
downloads=4
upload_mib=""
flv_s=""
scenarios=()
usage() { sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps=$2; reps_given=1; shift 2 ;;
    --quick) quick=1; shift ;;
    --out) out=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    --build-dir) build_dir=$2; build=0; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --quota) quota=$2; shift 2 ;;
    --small-seconds) small_s=$2; shift 2 ;;
    --large-mib) large_mib=$2; shift 2 ;;
    --downloads) downloads=$2; shift 2 ;;
    --upload-mib) upload_mib=$2; shift 2 ;;
    --flv-seconds) flv_s=$2; shift 2 ;;
    --list) printf '%s\n' "${all_scenarios[@]}"; exit 0 ;;
    -h|--help) usage 0 ;;
    -*) echo "http_compare.sh: unknown option $1" >&2; usage ;;
    *) scenarios+=("$1"); shift ;;
  esac
done
if [ "$quick" = 1 ]; then
  [ "$reps_given" = 1 ] || reps=1
  : "${small_s:=4}" "${large_mib:=256}" "${upload_mib:=256}" "${flv_s:=8}"
  [ ${#scenarios[@]} -gt 0 ] || scenarios=(small small-close tiny tiny-close large upload flv200)
fi
: "${small_s:=10}" "${large_mib:=1024}" "${upload_mib:=1024}" "${flv_s:=20}"
[ ${#scenarios[@]} -gt 0 ] || scenarios=("${all_scenarios[@]}")
for s in "${scenarios[@]}"; do
  case " ${all_scenarios[*]} " in *" $s "*) ;; *) echo "http_compare.sh: unknown scenario $s (--list)" >&2; exit 2 ;; esac
done
positive() {  # positive NAME VALUE MAX
  case "$2" in ''|*[!0-9]*|0) echo "http_compare.sh: $1 needs a positive integer" >&2; exit 2 ;; esac
  [ "$2" -le "$3" ] || { echo "http_compare.sh: $1 is at most $3" >&2; exit 2; }
}
positive --reps "$reps" 50
positive --connections "$connections" 5000
positive --small-seconds "$small_s" 600
positive --large-mib "$large_mib" 16384
positive --downloads "$downloads" 64
positive --upload-mib "$upload_mib" 16384
positive --flv-seconds "$flv_s" 600

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
[ -n "$out" ] || out="/tmp/sluice-http-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
out=$(cd "$out" && pwd)
: > "$out/results.jsonl"
log() { echo "$*" | tee -a "$out/run.log" >&2; }
py() { python3 "$root/bench/http_compare.py" "$@"; }

# --- prerequisites --------------------------------------------------------------------------------
need=()
for p in nginx wrk curl ffmpeg python3; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
bench_apt_install http_compare.sh ${need[@]+"${need[@]}"}
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
wrk_bin=$(command -v wrk || echo /usr/bin/wrk)
nginx_put=0
"$nginx_bin" -V 2>&1 | grep -q -- '--with-http_dav_module' && nginx_put=1

work=$(mktemp -d /tmp/sluice-http-work-XXXXXX)
pids=()
bench_trap_cleanup
[ -z "$quota" ] || bench_cgroup_create http-compare
mkdir -p "$work/bin"
if [ -n "$build_dir" ]; then
  src_sluice="$build_dir/server/sluice"; src_bench="$build_dir/bench/load/sluice-bench"
  commit="binaries from $build_dir"
else
  if [ "$build" = 1 ]; then
    # The tree is shared: someone else's half-saved edit can break the build for a moment.
    for try in 1 2 3 4; do
      make -C "$root" release >"$out/build.log" 2>&1 && break
      [ "$try" = 4 ] && { tail -20 "$out/build.log" >&2; echo "http_compare.sh: make release failed" >&2; exit 1; }
      log "http_compare: make release failed (attempt $try), retrying in 30 s"
      sleep 30
    done
  fi
  src_sluice="$root/build/release/server/sluice"; src_bench="$root/build/release/bench/load/sluice-bench"
  commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
  dirty=$(git -C "$root" status --porcelain -- server protocol media config bench/load 2>/dev/null | wc -l)
  [ "$dirty" -gt 0 ] && commit="$commit + $dirty uncommitted file(s)"
fi
if [ ! -x "$src_sluice" ] || [ ! -x "$src_bench" ]; then
  echo "http_compare.sh: no sluice / sluice-bench binaries ($src_sluice, $src_bench)" >&2; exit 1
fi
# Private copies: every run of one comparison must measure the same binary.
cp "$src_sluice" "$src_bench" "$work/bin/"
sluice="$work/bin/sluice"
bench="$work/bin/sluice-bench"
sluice_version=$("$sluice" --version 2>/dev/null | head -1 || true)

# --- files: one directory, served by both ----------------------------------------------------------
# $work/www/vod is Sluice's VOD root and, through nginx's "root $work/www", nginx's /vod/, so both
# answer http://127.0.0.1:PORT/vod/NAME from the same files (random bytes: nothing compresses).
www="$work/www"
mkdir -p "$www/vod" "$www/.nginx-body" "$work/src"
want() { case " ${scenarios[*]} " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
head -c 4096 /dev/urandom > "$www/vod/small.mp4"
printf 'hello!!!\n' > "$www/vod/tiny.mp4"   # 9 bytes
if want large; then
  log "http_compare: writing a ${large_mib} MiB file"
  head -c "$(( large_mib * 1048576 ))" /dev/urandom > "$www/vod/big.mp4"
fi
if want upload; then
  log "http_compare: writing a ${upload_mib} MiB file to upload"
  head -c "$(( upload_mib * 1048576 ))" /dev/urandom > "$work/src/upload.mp4"
fi
if want api; then
  # 20 publishers of one small file: 320x180 H.264 at 48 kb/s + 16 kb/s AAC, so ingest costs little.
  log "http_compare: making $(( small_s + 20 )) s of a 64 kb/s FLV (20 publishers for the api scenario)"
  ffmpeg -nostdin -loglevel error -y -f lavfi -i "testsrc=size=320x180:rate=15:duration=$(( small_s + 20 ))" \
    -f lavfi -i "sine=duration=$(( small_s + 20 ))" -c:v libx264 -preset ultrafast -g 30 -b:v 48k \
    -maxrate 48k -bufsize 48k -pix_fmt yuv420p -c:a aac -b:a 16k -ac 1 -f flv "$work/src/api.flv"
fi
if want flv200 || want flv1000; then
  log "http_compare: making $(( flv_s + 15 )) s of 1280x720 H.264 2400k + AAC 128k with noise (live source)"
  bench_make_media "$work/src/live.flv" "$(( flv_s + 15 ))" 2400k
fi
token="bench-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"

# --- the machine --------------------------------------------------------------------------------
cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
machine="$(nproc) cores, ${cpu_model:-unknown CPU}, Linux $(uname -r), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
nginx_version=$("$nginx_bin" -v 2>&1 | sed 's/^nginx version: //')
wrk_version=$("$wrk_bin" -v 2>&1 | head -1 | awk '{print $1, $2}' || true)
curl_version=$(curl --version | head -1 | awk '{print $1, $2}')
py meta "$out" machine="$machine" nginx="$nginx_version" wrk="$wrk_version" curl="$curl_version" \
  sluice_commit="$commit" sluice_version="$sluice_version" reps="$reps" connections="$connections" \
  small_s="$small_s" large_mib="$large_mib" downloads="$downloads" upload_mib="$upload_mib" flv_s="$flv_s" \
  nginx_put="$nginx_put" scenarios="${scenarios[*]}" started="$(date -u +%Y-%m-%dT%H:%M:%SZ)" uptime_start="$(uptime)"
log "http_compare: sluice $commit ($sluice_version)"
log "http_compare: machine: $machine"
log "http_compare: $nginx_version, $wrk_version, $curl_version; nginx PUT (dav): $([ "$nginx_put" = 1 ] && echo yes || echo no)"
log "http_compare: load at start: $(uptime)"
log "http_compare: scenarios: ${scenarios[*]}; $reps repetition(s); ${quota:+CPU quota $quota core per server; }results in $out"

# --- servers ------------------------------------------------------------------------------------
server_pid=""; port=""; rtmp_port=""
start_sluice() {
  port=$(bench_free_port)
  rtmp_port=$(bench_free_port)
  while [ "$rtmp_port" = "$port" ]; do rtmp_port=$(bench_free_port); done
  cat > "$work/sluice.yaml" <<YAML
workers: 1
rtmp:
  listen: 127.0.0.1:$rtmp_port
  chunk_size: 4096
apps:
  live: { type: live }
  vod: { type: vod, root: $www/vod }
http:
  listen: 127.0.0.1:$port
  upload:
    token: "$token"
    max_size: 16GiB
log:
  level: warn
YAML
  "$sluice" --config "$work/sluice.yaml" >>"$out/sluice.log" 2>&1 &
  server_pid=$!; pids+=("$server_pid")
}
start_nginx() {
  port=$(bench_free_port)
  mkdir -p "$work/nginx"
  # One process that does the work (no master), sendfile, no access log (Sluice at log level warn
  # logs no requests either), keep-alive without a per-connection request limit as in Sluice.
  # PUT: core dav module, Bearer token checked with a map, body spooled next to the files.
  cat > "$work/nginx/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
worker_rlimit_nofile 20000;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 10000; }
http {
  types { video/mp4 mp4; video/x-flv flv; }
  default_type application/octet-stream;
  access_log off;
  sendfile on;
  keepalive_requests 1000000;
  keepalive_timeout 15s;
  client_body_temp_path $www/.nginx-body;
  map \$http_authorization \$bearer_ok { default 0; "Bearer $token" 1; }
  map "\$request_method:\$bearer_ok" \$put_denied { default 0; "PUT:0" 1; }
  server {
    listen 127.0.0.1:$port;
    root $www;
    location /vod/ {
      if (\$put_denied) { return 401; }
      $( [ "$nginx_put" = 1 ] && echo "dav_methods PUT;" )
      create_full_put_path off;
      client_max_body_size 0;
    }
  }
}
CONF
  [ "$nginx_put" = 1 ] || sed -i '/create_full_put_path/d' "$work/nginx/nginx.conf"
  "$nginx_bin" -p "$work/nginx" -e "$work/nginx/error.log" -c "$work/nginx/nginx.conf" >>"$out/nginx.log" 2>&1 &
  server_pid=$!; pids+=("$server_pid")
}
stop_server() {
  bench_stop "$server_pid"
  if [ -f "$work/nginx/error.log" ]; then cat "$work/nginx/error.log" >>"$out/nginx.log"; : > "$work/nginx/error.log"; fi
  server_pid=""
}

# sys_busy: jiffies the whole machine spent busy (all CPUs), from /proc/stat.
sys_busy() { awk '/^cpu / {print $2+$3+$4+$7+$8+$9; exit}' /proc/stat; }
ticks=$(getconf CLK_TCK)

# Run state shared by begin_run / end_run / the measure functions.
note=""; idle=0; peak=0; cpu0=0; cpu1=0; hwm=0; busy0=0; busy1=0; t0=0; t1=0; load=""
begin_run() {  # begin_run SERVER: start it, wait for it, take the "before" figures
  note=""; idle=0; peak=0; cpu0=0; cpu1=0; hwm=0
  "start_$1"
  bench_wait_port "$port" 10 || note="server did not start"
  if [ "$1" = sluice ] && [ -z "$note" ]; then bench_wait_port "$rtmp_port" 5 || note="server did not start"; fi
  if [ -n "$quota" ] && [ -z "$note" ]; then bench_cgroup_limit "$quota" "$server_pid"; fi
  if [ -z "$note" ]; then
    idle=$(bench_rss "$server_pid"); peak=$idle; cpu0=$(bench_cpu_ticks "$server_pid")
  fi
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  busy0=$(sys_busy); t0=$(date +%s.%N)
}
# sample_while PID...: the server's peak RSS while any of these processes runs.
sample_while() {
  local r alive p
  while :; do
    alive=0
    for p in "$@"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ "$alive" = 1 ] || break
    r=$(bench_rss "$server_pid" 2>/dev/null || echo 0); [ "${r:-0}" -gt "$peak" ] && peak=$r
    sleep 0.1
  done
}
end_run() {  # after the load: the "after" figures, then stop the server
  t1=$(date +%s.%N); busy1=$(sys_busy)
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    if [ -z "$note" ]; then cpu1=$(bench_cpu_ticks "$server_pid"); hwm=$(bench_hwm "$server_pid"); fi
  else
    cpu1=$cpu0; note="${note:+$note; }server died"
  fi
  stop_server
}
record() {  # record KIND SERVER REP key=value...
  py record "$out" kind="$1" server="$2" rep="$3" cpu_ticks="$(( cpu1 - cpu0 ))" busy_ticks="$(( busy1 - busy0 ))" \
    ticks="$ticks" t0="$t0" t1="$t1" idle_rss_kb="$idle" sampled_rss_kb="$peak" hwm_kb="$hwm" loadavg="$load" \
    note="$note" "${@:4}"
}

measure_small() {  # SCENARIO SERVER REP: small, small-close, tiny, tiny-close
  local scenario=$1 server=$2 rep=$3 txt="$out/wrk-$1-$2-$3.txt" wpid file=small.mp4 close=() status=200
  case "$scenario" in tiny*) file=tiny.mp4 ;; notfound) file=missing.mp4; status=404 ;; esac
  # One request per connection: wrk reconnects after each answer that closes.
  case "$scenario" in *-close) close=(-H "Connection: close") ;; esac
  begin_run "$server"
  if [ -z "$note" ]; then
    timeout $(( small_s + 30 )) "$wrk_bin" -t1 -c"$connections" -d"${small_s}s" --timeout 5s --latency \
      ${close[@]+"${close[@]}"} "http://127.0.0.1:$port/vod/$file" >"$txt" 2>&1 &
    wpid=$!; pids+=("$wpid")
    sample_while "$wpid"
    wait "$wpid" || note="wrk exited with $?"
  fi
  end_run
  record small "$server" "$rep" scenario="$scenario" wrk="$txt" connections="$connections" seconds="$small_s" \
    expect_status="$status"
}

streams_listed() {  # streams_listed FILE: how many streams a saved /api/v1/streams answer lists
  python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$1" 2>/dev/null || echo 0
}
measure_api() {  # REP: Sluice's /api/v1/streams with 20 live streams (nginx's turn: measure_small small)
  local rep=$1 txt="$out/wrk-api-sluice-$1.txt" answer="$out/api-streams-$1.json" wpid pub="" n=0 i c0
  local url ingest_pct=""
  begin_run sluice
  url="http://127.0.0.1:$port/api/v1/streams"
  if [ -z "$note" ]; then
    # One process, 20 RTMP publishers (api0..api19), all at once, for longer than the run.
    "$bench" publish -n 20 --rate 0 -d "$(( small_s + 20 ))" -q -f "$work/src/api.flv" \
      "rtmp://127.0.0.1:$rtmp_port/live/api{i}" >"$out/publisher-api-$rep.txt" 2>&1 &
    pub=$!; pids+=("$pub")
    for i in $(seq 1 50); do
      curl -s --max-time 2 -o "$answer" "$url" || true
      n=$(streams_listed "$answer")
      [ "$n" = 20 ] && break
      sleep 0.2
    done
    [ "$n" = 20 ] || note="the API listed $n streams, not 20"
  fi
  if [ -z "$note" ]; then
    # The server's CPU for ingest alone over 2 s, reported beside (not subtracted).
    c0=$(bench_cpu_ticks "$server_pid"); sleep 2
    ingest_pct=$(( ($(bench_cpu_ticks "$server_pid") - c0) * 100 / (2 * ticks) ))
    idle=$(bench_rss "$server_pid"); peak=$idle; cpu0=$(bench_cpu_ticks "$server_pid")
    busy0=$(sys_busy); t0=$(date +%s.%N); load=$(cut -d' ' -f1-3 /proc/loadavg)
    timeout $(( small_s + 30 )) "$wrk_bin" -t1 -c"$connections" -d"${small_s}s" --timeout 5s --latency \
      "$url" >"$txt" 2>&1 &
    wpid=$!; pids+=("$wpid")
    sample_while "$wpid"
    wait "$wpid" || note="wrk exited with $?"
    t1=$(date +%s.%N); busy1=$(sys_busy)
    # Still 20 after the load (nobody dropped out under it).
    curl -s --max-time 2 -o "$answer" "$url" || true
    n=$(streams_listed "$answer")
    [ "$n" = 20 ] || note="${note:+$note; }the API listed $n streams after the run, not 20"
  else
    t1=$(date +%s.%N); busy1=$(sys_busy)
  fi
  if kill -0 "$server_pid" 2>/dev/null; then
    [ -n "$note" ] || { cpu1=$(bench_cpu_ticks "$server_pid"); hwm=$(bench_hwm "$server_pid"); }
  else
    cpu1=$cpu0; note="${note:+$note; }server died"
  fi
  if [ -n "$pub" ]; then
    kill -0 "$pub" 2>/dev/null || note="${note:+$note; }publisher died during the run"
    bench_stop "$pub"
  fi
  stop_server
  record small sluice "$rep" scenario=api wrk="$txt" connections="$connections" seconds="$small_s" \
    expect_status=200 streams="$n" answer_bytes="$(stat -c %s "$answer" 2>/dev/null || echo 0)" \
    ingest_cpu_pct="$ingest_pct"
}

measure_large() {  # SERVER REP
  local server=$1 rep=$2 i cpids=() files=() f
  begin_run "$server"
  if [ -z "$note" ]; then
    for i in $(seq 1 "$downloads"); do
      f="$out/curl-large-$server-$rep-$i.txt"; files+=("$f")
      curl -s -o /dev/null --max-time 600 -w '%{http_code} %{size_download} %{time_total}\n' \
        "http://127.0.0.1:$port/vod/big.mp4" >"$f" 2>&1 &
      cpids+=("$!"); pids+=("$!")
    done
    sample_while "${cpids[@]}"
    for i in "${cpids[@]}"; do wait "$i" || note="${note:+$note; }a curl failed"; done
  fi
  end_run
  record large "$server" "$rep" expect_bytes="$(( large_mib * 1048576 ))" curl="$(IFS=,; echo "${files[*]}")"
}

measure_upload() {  # SERVER REP
  local server=$1 rep=$2 f="$out/curl-upload-$1-$2.txt" cpid target="$www/vod/up-$1-$2.mp4" size=0
  if [ "$server" = nginx ] && [ "$nginx_put" = 0 ]; then return 0; fi
  rm -f "$target"
  begin_run "$server"
  if [ -z "$note" ]; then
    curl -s -o /dev/null --max-time 900 -w '%{http_code} %{size_upload} %{time_total}\n' \
      -H "Authorization: Bearer $token" -T "$work/src/upload.mp4" \
      "http://127.0.0.1:$port/vod/up-$server-$rep.mp4" >"$f" 2>&1 &
    cpid=$!; pids+=("$cpid")
    sample_while "$cpid"
    wait "$cpid" || note="curl exited with $?"
  fi
  end_run
  [ -f "$target" ] && size=$(stat -c %s "$target")
  rm -f "$target"
  record upload "$server" "$rep" expect_bytes="$(( upload_mib * 1048576 ))" stored_bytes="$size" curl="$f"
}

measure_flv() {  # SCENARIO CLIENT(http-flv|rtmp) REP: Sluice only
  local name=$1 client=$2 rep=$3 n=${1#flv} pub="" bpid url json="$out/bench-$1-$2-$3.json" rc=0
  begin_run sluice
  if [ -z "$note" ]; then
    bench_publish "$work/src/live.flv" "rtmp://127.0.0.1:$rtmp_port/live/bench" "$out/publisher.log"
    pub=$!; pids+=("$pub")
    sleep 2.5   # connected, and a whole GOP (2 s) has gone through
    kill -0 "$pub" 2>/dev/null || note="publisher exited early"
  fi
  if [ -z "$note" ]; then
    idle=$(bench_rss "$server_pid"); peak=$idle; cpu0=$(bench_cpu_ticks "$server_pid")
    busy0=$(sys_busy); t0=$(date +%s.%N); load=$(cut -d' ' -f1-3 /proc/loadavg)
    if [ "$client" = http-flv ]; then
      url="http://127.0.0.1:$port/live/bench.flv"
      "$bench" http-flv -n "$n" --rate 400 -d "$flv_s" -q --allow-failures "$n" --json "$json" "$url" \
        >"$out/bench-$name-$client-$rep.txt" 2>&1 &
    else
      url="rtmp://127.0.0.1:$rtmp_port/live/bench"
      "$bench" play -n "$n" --rate 400 -d "$flv_s" -q --allow-failures "$n" --json "$json" "$url" \
        >"$out/bench-$name-$client-$rep.txt" 2>&1 &
    fi
    bpid=$!; pids+=("$bpid")
    sample_while "$bpid"
    wait "$bpid" || rc=$?
  fi
  t1=$(date +%s.%N); busy1=$(sys_busy)
  if kill -0 "$server_pid" 2>/dev/null; then
    [ -n "$note" ] || { cpu1=$(bench_cpu_ticks "$server_pid"); hwm=$(bench_hwm "$server_pid"); }
  else
    cpu1=$cpu0; note="${note:+$note; }server died"
  fi
  if [ -n "$pub" ]; then
    kill -0 "$pub" 2>/dev/null || note="${note:+$note; }publisher died during the run"
    bench_stop "$pub"
  fi
  stop_server
  record flv "sluice" "$rep" scenario="$name" client="$client" players="$n" seconds="$flv_s" bench_json="$json" bench_rc="$rc"
}

# --- the runs -----------------------------------------------------------------------------------
t_start=$(date +%s)
for name in "${scenarios[@]}"; do
  log "http_compare: $name, load $(cut -d' ' -f1-3 /proc/loadavg)"
  for rep in $(seq 1 "$reps"); do
    case "$name" in
      small|small-close|tiny|tiny-close|notfound) measure_small "$name" sluice "$rep"; measure_small "$name" nginx "$rep" ;;
      api) measure_api "$rep"; measure_small api nginx "$rep" ;;
      large) measure_large sluice "$rep"; measure_large nginx "$rep" ;;
      upload) measure_upload sluice "$rep"; measure_upload nginx "$rep" ;;
      flv*) measure_flv "$name" http-flv "$rep"; measure_flv "$name" rtmp "$rep" ;;
    esac
  done
done
log "http_compare: done in $(( $(date +%s) - t_start )) s; load at end: $(uptime)"
py report "$out" | tee "$out/report.md"
echo "(per-run logs, wrk/curl/bench outputs: $out)"
