#!/usr/bin/env bash
# Side-by-side: Sluice (release build, one worker loop), SRS (built from source by
# bench/peers/build_srs.sh, one process) and nginx-rtmp (Debian nginx + libnginx-mod-rtmp, one
# process) on loopback, the same sluice-bench scenario against each, alternating sluice, srs, nginx,
# sluice, srs, nginx... for REPS repetitions, plus the kernel floor (bench/floor.c) at the same
# number of connections. Prints per-run lines and tables of medians with the Sluice/SRS and
# Sluice/nginx ratios. docs/benchmarks.md explains the method and holds the latest table.
#
# Usage: bench/compare.sh [--reps N] [--quick] [--seconds S] [--out DIR] [--no-build | --ref REF] [SCENARIO...]
#        bench/compare.sh --list
# Scenarios (default: all, in this order; 22 minutes with 3 repetitions before SRS, which adds a
# run to every live scenario and ttff):
#   live200 live500 live1000 live2000    live fan-out of one 2.5 Mb/s publisher (ffmpeg -re -c copy)
#   vod-flv200 vod-flv1000               N players of one FLV file from the start
#   vod-mp4-200 vod-mp4-1000             the same media as MP4 (mp4:movie.mp4)
#   ttff                                 100 late joiners, 10 per second, into a running live stream
#   (liveN, vod-flvN and vod-mp4-N with another N work too: live50 for a small trial)
# --quick: 1 repetition, 8 s runs, scenarios live200 vod-flv200 ttff unless named (a smoke test).
# --reps N: repetitions (default 3). --seconds S: length of the live and VOD runs (default 20).
# --out DIR: where results go (default /tmp/sluice-compare-DATE; kept).
# Sluice is the working tree's release build (make release, then copied so a concurrent rebuild
# cannot change it mid-run); --no-build uses build/release as it is. --ref REF also builds that
# commit in a private directory and runs it as one more server ("ref") beside the tree, SRS and
# nginx, alternating all of them, with a tree/ref ratio per scenario: a change measured against the code
# before it in one run. The tree's sluice-bench drives all of them.
# Every run is bounded: SECONDS per server per repetition (ttff 15 s, floor 6 s), on 127.0.0.1.
# Environment:
#   READ_BATCH_MS  the players' read mode: 0 (default) reads whenever data arrives, as ffplay and
#                  VLC do; N lets about N ms of media build up in the socket before reading
#                  (sluice-bench play --read-batch-ms). The tables and results say which was used.
#   SRS_BIN        the SRS binary (default: where bench/peers/build_srs.sh builds it). Without one,
#                  the SRS column is skipped. SRS serves no files over RTMP: its VOD rows are n/a.
#   SRS_MW_LATENCY, SRS_MW_MSGS  SRS's play.mw_latency (ms) and mw_msgs (default 350 and 8).
#   SLUICE_WRITE_DELAY, SLUICE_WRITE_BUDGET, SLUICE_IO_URING, SLUICE_WORKERS  Sluice's (bench/lib.sh).
set -euo pipefail

all_scenarios=(live200 live500 live1000 live2000 vod-flv200 vod-flv1000 vod-mp4-200 vod-mp4-1000 ttff)
reps=3
reps_given=0
quick=0
seconds=""
out=""
build=1
ref=""
scenarios=()
usage() { sed -n '2,34p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps=$2; reps_given=1; shift 2 ;;
    --quick) quick=1; shift ;;
    --seconds) seconds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    --ref) ref=$2; shift 2 ;;
    --list) printf '%s\n' "${all_scenarios[@]}"; exit 0 ;;
    -h|--help) usage 0 ;;
    -*) echo "compare.sh: unknown option $1" >&2; usage ;;
    *) scenarios+=("$1"); shift ;;
  esac
done
live_s=20; vod_s=20; ttff_s=15; floor_s=6; ttff_n=100; ttff_rate=10
if [ "$quick" = 1 ]; then
  [ "$reps_given" = 1 ] || reps=1
  live_s=8; vod_s=8; ttff_s=8; floor_s=5; ttff_n=40
  [ ${#scenarios[@]} -gt 0 ] || scenarios=(live200 vod-flv200 ttff)
fi
if [ -n "$seconds" ]; then live_s=$seconds; vod_s=$seconds; fi
[ ${#scenarios[@]} -gt 0 ] || scenarios=("${all_scenarios[@]}")
for s in "${scenarios[@]}"; do
  # The listed ones, or the same kinds at another player count (live50, vod-flv50, vod-mp4-50).
  [[ "$s" =~ ^(live|vod-flv|vod-mp4-)[1-9][0-9]*$ || "$s" = ttff ]] ||
    { echo "compare.sh: unknown scenario $s (--list; or liveN, vod-flvN, vod-mp4-N)" >&2; exit 2; }
done
case "$reps" in ''|*[!0-9]*|0) echo "compare.sh: --reps needs a positive integer" >&2; exit 2 ;; esac
read_batch=${READ_BATCH_MS:-0}
case "$read_batch" in ''|*[!0-9]*) echo "compare.sh: READ_BATCH_MS needs a number of ms (0: read as data arrives)" >&2; exit 2 ;; esac
if [ "$read_batch" = 0 ]; then read_mode="reads as data arrives (--read-batch-ms 0)"
else read_mode="reads in ${read_batch} ms batches (--read-batch-ms $read_batch)"; fi
for v in "$live_s" "$vod_s"; do
  case "$v" in ''|*[!0-9]*|0) echo "compare.sh: --seconds needs a positive integer" >&2; exit 2 ;; esac
  [ "$v" -le 600 ] || { echo "compare.sh: --seconds is at most 600" >&2; exit 2; }
done

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
. "$root/bench/peers/build_srs.sh"   # the helpers only: srs_default_bin, srs_write_config, srs_exec
[ -n "$out" ] || out="/tmp/sluice-compare-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
out=$(cd "$out" && pwd)
results="$out/results.jsonl"
: > "$results"
log() { echo "$*" | tee -a "$out/run.log" >&2; }

# --- prerequisites: nginx + the RTMP module, the release build, the floor program ----------------
need=()
for p in nginx libnginx-mod-rtmp ffmpeg python3; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
bench_apt_install compare.sh ${need[@]+"${need[@]}"}
rtmp_module=$(dpkg -L libnginx-mod-rtmp | grep '/ngx_rtmp_module\.so$' | head -1)
[ -n "$rtmp_module" ] || { echo "compare.sh: ngx_rtmp_module.so not found in libnginx-mod-rtmp" >&2; exit 1; }
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
work=$(mktemp -d /tmp/sluice-compare-work-XXXXXX)
pids=()
bench_trap_cleanup
mkdir -p "$work/bin"
ref_commit=""
if [ -n "$ref" ]; then
  # A given commit, exported and built privately (a few minutes on 2 cores): only its server.
  ref_commit=$(git -C "$root" rev-parse --short "$ref^{commit}") || { echo "compare.sh: unknown ref $ref" >&2; exit 2; }
  log "compare: building $ref ($ref_commit) in $work/src"
  mkdir -p "$work/src"
  git -C "$root" archive "$ref_commit" | tar -x -C "$work/src"
  { cmake -S "$work/src" -B "$work/src/build" -DCMAKE_BUILD_TYPE=Release -DSLUICE_WERROR=OFF -DSLUICE_TESTS=OFF &&
    cmake --build "$work/src/build" -j"$(nproc)" --target sluice; } >"$out/build-ref.log" 2>&1 ||
    { tail -20 "$out/build-ref.log" >&2; echo "compare.sh: building $ref failed" >&2; exit 1; }
  cp "$work/src/build/server/sluice" "$work/bin/sluice-ref"
  rm -rf "$work/src"
fi
{
  if [ "$build" = 1 ]; then
    # The tree is shared: someone else's half-saved edit can break the build for a moment.
    for try in 1 2 3 4; do
      make -C "$root" release >"$out/build.log" 2>&1 && break
      [ "$try" = 4 ] && { tail -20 "$out/build.log" >&2; echo "compare.sh: make release failed" >&2; exit 1; }
      log "compare: make release failed (attempt $try), retrying in 30 s"
      sleep 30
    done
  fi
  if [ ! -x "$root/build/release/server/sluice" ] || [ ! -x "$root/build/release/bench/load/sluice-bench" ]; then
    echo "compare.sh: no release build (make release)" >&2; exit 1
  fi
  # Private copies: build/release may be rebuilt by someone else while this runs, and every run of
  # one comparison must measure the same binary.
  cp "$root/build/release/server/sluice" "$root/build/release/bench/load/sluice-bench" "$work/bin/"
  commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
  dirty=$(git -C "$root" status --porcelain -- server protocol media config 2>/dev/null | wc -l)
  [ "$dirty" -gt 0 ] && commit="$commit + $dirty uncommitted file(s) in server/ protocol/ media/ config/"
}
sluice="$work/bin/sluice"
bench="$work/bin/sluice-bench"
sluice_version=$("$sluice" --version 2>/dev/null | head -1 || true)
# SRS: a private copy too, when it has been built (bench/peers/build_srs.sh); else no SRS column.
srs_src=$(srs_default_bin)
srs_version=""
if [ -x "$srs_src" ]; then
  cp "$srs_src" "$work/bin/srs"
  srs_version=$("$work/bin/srs" -v 2>&1 | tail -1 || true)
  [ -n "$srs_version" ] || srs_version=unknown
else
  echo "compare.sh: SRS not built (bench/peers/build_srs.sh), SRS column skipped" | tee -a "$out/run.log" >&2
fi
cc -O2 -o "$work/floor" "$root/bench/floor.c" -luring

# --- media --------------------------------------------------------------------------------------
longest=$live_s; [ "$vod_s" -gt "$longest" ] && longest=$vod_s; [ "$ttff_s" -gt "$longest" ] && longest=$ttff_s
media_s=$(( longest + 40 ))   # VOD players must not reach the end of the file, even 5 s ahead
mkdir -p "$work/media"
log "compare: making ${media_s} s of 1280x720 H.264 2400k + AAC 128k with noise"
bench_make_media "$work/media/movie.flv" "$media_s" 2400k
ffmpeg -nostdin -loglevel error -y -i "$work/media/movie.flv" -c copy -movflags +faststart "$work/media/movie.mp4"
media_kbit=$(python3 -c "import os,sys; print(round(os.path.getsize(sys.argv[1])*8/float(sys.argv[2])/1000))" \
  "$work/media/movie.flv" "$media_s")

# --- the machine --------------------------------------------------------------------------------
cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
machine="$(nproc) cores, ${cpu_model:-unknown CPU}, Linux $(uname -r), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
nginx_version=$("$nginx_bin" -v 2>&1 | sed 's/^nginx version: //')
rtmp_version=$(dpkg-query -W -f='${Version}' libnginx-mod-rtmp)
servers=(sluice)
[ -n "$ref_commit" ] && servers+=(ref)
[ -n "$srs_version" ] && servers+=(srs)
servers+=(nginx)
cat > "$out/meta.json" <<JSON
{"machine": "$machine", "nginx": "$nginx_version", "nginx_rtmp": "$rtmp_version",
 "sluice_commit": "$commit", "sluice_version": "$sluice_version", "ref_commit": "$ref_commit",
 "srs": "$srs_version", "srs_mw_latency": "${SRS_MW_LATENCY:-}", "srs_mw_msgs": "${SRS_MW_MSGS:-}",
 "servers": "${servers[*]}", "read_batch_ms": $read_batch, "read_mode": "$read_mode",
 "media_kbit": $media_kbit, "media_s": $media_s, "reps": $reps, "live_s": $live_s, "vod_s": $vod_s, "ttff_s": $ttff_s,
 "floor_s": $floor_s, "ttff_players": $ttff_n, "ttff_rate": $ttff_rate,
 "scenarios": "${scenarios[*]}", "started": "$(date -u +%Y-%m-%dT%H:%M:%SZ)", "uptime_start": "$(uptime)"}
JSON
log "compare: sluice $commit ($sluice_version)"
log "compare: machine: $machine"
log "compare: nginx $nginx_version, libnginx-mod-rtmp $rtmp_version; media ${media_kbit} kbit/s"
[ -n "$srs_version" ] && log "compare: SRS $srs_version ($srs_src), mw_latency ${SRS_MW_LATENCY:-350 (default)}, mw_msgs ${SRS_MW_MSGS:-8 (default)}"
log "compare: players $read_mode"
log "compare: load at start: $(uptime)"
log "compare: scenarios: ${scenarios[*]}; $reps repetition(s); results in $out"

# --- servers ------------------------------------------------------------------------------------
server_pid=""; port=""
start_sluice() {
  port=$(bench_free_port)
  bench_sluice_config "$work/sluice.yaml" "$port" "$work/media"
  "$sluice" --config "$work/sluice.yaml" >>"$out/sluice.log" 2>&1 &
  server_pid=$!; pids+=("$server_pid")
}
start_ref() {
  port=$(bench_free_port)
  bench_sluice_config "$work/sluice-ref.yaml" "$port" "$work/media"
  "$work/bin/sluice-ref" --config "$work/sluice-ref.yaml" >>"$out/sluice-ref.log" 2>&1 &
  server_pid=$!; pids+=("$server_pid")
}
start_nginx() {
  port=$(bench_free_port)
  mkdir -p "$work/nginx"
  cat > "$work/nginx/nginx.conf" <<CONF
load_module $rtmp_module;
daemon off;
master_process off;
worker_processes 1;
worker_rlimit_nofile 20000;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 10000; }
rtmp {
  server {
    listen 127.0.0.1:$port;
    chunk_size 4096;
    application live { live on; }
    application vod { play $work/media; }
  }
}
CONF
  "$nginx_bin" -p "$work/nginx" -e "$work/nginx/error.log" -c "$work/nginx/nginx.conf" >>"$out/nginx.log" 2>&1 &
  server_pid=$!; pids+=("$server_pid")
}
start_srs() {
  port=$(bench_free_port)
  mkdir -p "$work/srs"
  srs_write_config "$work/srs/srs.conf" "$port" "$work/srs"
  (cd "$work/srs" && srs_exec "$work/bin/srs" -c "$work/srs/srs.conf") >>"$out/srs.log" 2>&1 &
  server_pid=$!; pids+=("$server_pid")
}
stop_server() {
  bench_stop "$server_pid"
  [ -f "$work/nginx/error.log" ] && { cat "$work/nginx/error.log" >>"$out/nginx.log"; : > "$work/nginx/error.log"; }
  server_pid=""
}

# sys_busy: jiffies the whole machine spent busy (all CPUs), from /proc/stat.
sys_busy() { awk '/^cpu / {print $2+$3+$4+$7+$8+$9; exit}' /proc/stat; }
ticks=$(getconf CLK_TCK)

# scenario_setup NAME: kind (live|vod|ttff), players, rate, secs, path (URL after the app).
scenario_setup() {
  case "$1" in
    live*) kind=live; players=${1#live}; rate=400; secs=$live_s; app=live; path=bench ;;
    vod-flv*) kind=vod; players=${1#vod-flv}; rate=400; secs=$vod_s; app=vod; path=movie.flv ;;
    vod-mp4-*) kind=vod; players=${1#vod-mp4-}; rate=400; secs=$vod_s; app=vod; path=mp4:movie.mp4 ;;
    ttff) kind=ttff; players=$ttff_n; rate=$ttff_rate; secs=$ttff_s; app=live; path=bench ;;
  esac
}

# measure SERVER SCENARIO REP: one bounded run, one JSON line in results.jsonl.
measure() {
  local server=$1 name=$2 rep=$3 pub="" note=""
  scenario_setup "$name"
  if [ "$server" = srs ] && [ "$kind" = vod ]; then
    # SRS plays live streams only (its DVR records, nothing plays a file back over RTMP): a player
    # of vod/movie.flv would wait for a publisher that never comes. Recorded as n/a, not run.
    python3 "$root/bench/compare.py" na "$out" scenario="$name" kind="$kind" server="$server" rep="$rep" \
      players="$players" note="n/a: SRS has no VOD of files over RTMP"
    return 0
  fi
  "start_$server"
  if ! bench_wait_port "$port" 10; then note="server did not start"; fi
  if [ "$kind" != vod ] && [ -z "$note" ]; then
    bench_publish "$work/media/movie.flv" "rtmp://127.0.0.1:$port/live/bench" "$out/publisher.log"
    pub=$!; pids+=("$pub")
    sleep 2.5   # connected, and a whole GOP (2 s) has gone through
    kill -0 "$pub" 2>/dev/null || note="publisher exited early"
  fi
  local url="rtmp://127.0.0.1:$port/$app/$path" start=()
  [ "$kind" = vod ] && start=(--start 0)
  local json="$out/bench-$name-$server-$rep.json"
  local idle=0 cpu0=0 busy0 load peak=0 r hwm=0 cpu1=0 busy1 rc=0 t0 t1
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  busy0=$(sys_busy); busy1=$busy0; t0=$(date +%s.%N)
  if [ -z "$note" ]; then
    idle=$(bench_rss "$server_pid"); cpu0=$(bench_cpu_ticks "$server_pid"); peak=$idle
    t0=$(date +%s.%N)
    "$bench" play -n "$players" --rate "$rate" -d "$secs" -q --allow-failures "$players" --json "$json" \
      --read-batch-ms "$read_batch" "${start[@]}" "$url" >"$out/bench-$name-$server-$rep.txt" 2>&1 &
    local bpid=$!; pids+=("$bpid")
    while kill -0 "$bpid" 2>/dev/null; do
      r=$(bench_rss "$server_pid" 2>/dev/null || echo 0); [ "${r:-0}" -gt "$peak" ] && peak=$r
      sleep 0.25
    done
    wait "$bpid" || rc=$?
    if kill -0 "$server_pid" 2>/dev/null; then
      cpu1=$(bench_cpu_ticks "$server_pid"); hwm=$(bench_hwm "$server_pid")
    else
      cpu1=$cpu0; note="${note:+$note; }server died"
    fi
    busy1=$(sys_busy)
  fi
  t1=$(date +%s.%N)
  if [ -n "$pub" ]; then
    kill -0 "$pub" 2>/dev/null || note="${note:+$note; }publisher died during the run"
    bench_stop "$pub"
  fi
  stop_server
  python3 "$root/bench/compare.py" record "$out" "$json" scenario="$name" kind="$kind" server="$server" \
    rep="$rep" players="$players" rate="$rate" seconds="$secs" url="$url" bench_rc="$rc" \
    cpu_ticks="$(( cpu1 - cpu0 ))" busy_ticks="$(( busy1 - busy0 ))" ticks="$ticks" t0="$t0" t1="$t1" \
    idle_rss_kb="$idle" sampled_rss_kb="$peak" hwm_kb="$hwm" loadavg="$load" note="$note"
}

# floor N REP: the kernel floor at N connections and the media's bitrate (once per N and rep).
declare -A floor_done=()
floor() {
  local n=$1 rep=$2 line
  [ -n "${floor_done[$n-$rep]:-}" ] && return 0
  floor_done[$n-$rep]=1
  line=$("$work/floor" -n "$n" -d "$floor_s" -r "$media_kbit" 2>>"$out/floor.log")
  python3 "$root/bench/compare.py" floor "$out" "$rep" "$line"
}

# --- the runs -----------------------------------------------------------------------------------
t_start=$(date +%s)
for name in "${scenarios[@]}"; do
  scenario_setup "$name"
  log "compare: $name: $players players, $kind, $secs s per run, load $(cut -d' ' -f1-3 /proc/loadavg)"
  for rep in $(seq 1 "$reps"); do
    [ "$kind" = ttff ] || floor "$players" "$rep"
    for server in "${servers[@]}"; do measure "$server" "$name" "$rep"; done
  done
done
log "compare: done in $(( $(date +%s) - t_start )) s; load at end: $(uptime)"
python3 "$root/bench/compare.py" report "$out" | tee "$out/report.md"
echo "(per-run logs, bench summaries and JSON: $out)"
