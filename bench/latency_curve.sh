#!/usr/bin/env bash
# The cost/latency curve of live fan-out: for Sluice at several write-hold ceilings and for SRS at
# several merged-write latencies, the server's CPU per GB delivered to PLAYERS live players and the
# delay it adds to every message (p50/p99), side by side in one run, medians of REPS repetitions
# with the points alternated. docs/benchmarks.md ("The cost/latency curve") explains the method.
#
# Usage: bench/latency_curve.sh [--players N] [--seconds S] [--reps N] [--probes K] [--out DIR]
#   --players N   load players (default 1000)          --seconds S  measured run (default 30)
#   --reps N      repetitions (default $REPS or 3)     --probes K   delay probes (default 20)
#   --out DIR     results (default /tmp/sluice-latency-curve-DATE; kept)
# Environment:
#   SLUICE_HOLDS       Sluice's fixed holds in ms (default "0 30 100 350"): write_delay = the hold,
#                      write_budget = 0 (bench/lib.sh: SLUICE_WRITE_DELAY, SLUICE_WRITE_BUDGET)
#   SLUICE_CEILINGS    adaptive points with other ceilings, in ms (default none): "75 60" adds
#                      "a75" and "a60", the adaptive hold (default write_budget) with write_delay 75/60 ms
#   SLUICE_BUDGETS     adaptive points with other budgets, writes/s (default none): "20000" adds
#                      "b20000", the adaptive hold (default write_delay) with write_budget 20000
#   SLUICE_ADAPTIVE    1 (default): one more Sluice point with the server's defaults ("adaptive":
#                      SLUICE_WRITE_DELAY and SLUICE_WRITE_BUDGET unset); 0: without it
#   SRS_MW_LATENCIES   SRS's play.mw_latency values in ms (default "0 100 350"); LAT/MSGS also sets
#                      play.mw_msgs for that point ("0/0": SRS's merged writes off), SRS_MW_MSGS for
#                      all points (unset: SRS's default, 8: a player waits for more than 8 messages)
#   SRS_BIN            the SRS binary (default: bench/peers/build_srs.sh's); without one, no SRS points
#   READ_BATCH_MS      the load players' read mode: 0 (default) reads as data arrives, N in N ms batches
# Sluice is build/release as it is (make release first), copied to a private directory for the run.
#
# One run of a point: a fresh server on a free 127.0.0.1 port; PLAYERS `sluice-bench play` players
# of live/curve (ramp 400/s) connect first and wait for the stream; then `sluice-bench latency`
# publishes the media (2.5 Mb/s, real time, looping) and plays it with K probes in the same process:
# each probe message's delay = arrival - send. The players leave S seconds (+1) after the publisher
# started, the probe process is stopped right after (SIGTERM: it still writes its summary), so every
# delay is measured under the whole load. CPU = the server's utime + stime (/proc/PID/stat) from
# before the players connect to when they have left, over the bytes all players and probes received
# (the stream flows only while the publisher is on).
set -euo pipefail

players=1000
seconds=30
reps=${REPS:-3}
probes=20
out=""
usage() { sed -n '2,34p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --players) players=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --probes) probes=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "latency_curve.sh: unknown argument $1" >&2; usage ;;
  esac
done
for v in "$players" "$seconds" "$reps" "$probes"; do
  case "$v" in ''|*[!0-9]*|0) echo "latency_curve.sh: --players, --seconds, --reps and --probes need positive integers" >&2; exit 2 ;; esac
done
[ "$seconds" -le 600 ] || { echo "latency_curve.sh: --seconds is at most 600" >&2; exit 2; }
read_batch=${READ_BATCH_MS:-0}
case "$read_batch" in ''|*[!0-9]*) echo "latency_curve.sh: READ_BATCH_MS needs a number of ms" >&2; exit 2 ;; esac
if [ "$read_batch" = 0 ]; then read_mode="reads as data arrives (--read-batch-ms 0)"
else read_mode="reads in ${read_batch} ms batches (--read-batch-ms $read_batch)"; fi
holds=${SLUICE_HOLDS-0 30 100 350}
srs_mws=${SRS_MW_LATENCIES-0 100 350}
read -r -a hold_list <<<"$holds"
read -r -a srs_list <<<"$srs_mws"
for v in ${hold_list[@]+"${hold_list[@]}"}; do
  case "$v" in ''|*[!0-9]*) echo "latency_curve.sh: SLUICE_HOLDS is a list of ms (\"0 30 100\")" >&2; exit 2 ;; esac
done
for v in ${srs_list[@]+"${srs_list[@]}"}; do
  [[ "$v" =~ ^[0-9]+(/[0-9]+)?$ ]] || { echo "latency_curve.sh: SRS_MW_LATENCIES is a list of ms or ms/messages (\"0 100 350 0/0\")" >&2; exit 2; }
done

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
. "$root/bench/peers/build_srs.sh"   # the helpers only
[ -n "$out" ] || out="/tmp/sluice-latency-curve-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
out=$(cd "$out" && pwd)
case "$out/" in "$root/"*) echo "latency_curve.sh: --out must be outside the repository" >&2; exit 2 ;; esac
: > "$out/results.jsonl"
: > "$out/run.log"
log() { echo "$*" | tee -a "$out/run.log" >&2; }

need=()
for p in ffmpeg python3; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
bench_apt_install latency_curve.sh ${need[@]+"${need[@]}"}
if [ ! -x "$root/build/release/server/sluice" ] || [ ! -x "$root/build/release/bench/load/sluice-bench" ]; then
  echo "latency_curve.sh: no release build (make release)" >&2; exit 1
fi
work=$(mktemp -d /tmp/sluice-curve-work-XXXXXX)
pids=()
bench_trap_cleanup
mkdir -p "$work/bin" "$work/srs" "$work/media"
cp "$root/build/release/server/sluice" "$root/build/release/bench/load/sluice-bench" "$work/bin/"
sluice="$work/bin/sluice"
bench="$work/bin/sluice-bench"
# build/release is taken as it is: the tree's commit says what it should be, its date what it is.
sluice_built=$(date -u -r "$root/build/release/server/sluice" +%Y-%m-%dT%H:%M:%SZ)
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$root" status --porcelain -- server protocol media config 2>/dev/null | wc -l)
[ "$dirty" -gt 0 ] && commit="$commit + $dirty uncommitted file(s) in server/ protocol/ media/ config/"
srs_src=$(srs_default_bin)
srs_version=""
if [ -x "$srs_src" ]; then
  cp "$srs_src" "$work/bin/srs"
  srs_version=$("$work/bin/srs" -v 2>&1 | tail -1 || true)
  [ -n "$srs_version" ] || srs_version=unknown
elif [ -n "$srs_mws" ]; then
  echo "latency_curve.sh: SRS not built (bench/peers/build_srs.sh), SRS points skipped" | tee -a "$out/run.log" >&2
  srs_mws=""
  srs_list=()
fi

# The points, in the order each repetition runs them: by milliseconds, Sluice then SRS, adaptive last.
points=()
for v in $(printf '%s\n' ${hold_list[@]+"${hold_list[@]}"} ${srs_list[@]+"${srs_list[@]}"} | sort -t/ -k1,1n -k2,2n | uniq); do
  case " $holds " in *" $v "*) points+=("sluice:$v") ;; esac
  case " $srs_mws " in *" $v "*) points+=("srs:$v") ;; esac
done
for c in ${SLUICE_CEILINGS:-}; do points+=("sluice:a$c"); done
for b in ${SLUICE_BUDGETS:-}; do points+=("sluice:b$b"); done
[ "${SLUICE_ADAPTIVE:-1}" = 1 ] && points+=("sluice:adaptive")
[ ${#points[@]} -gt 0 ] || { echo "latency_curve.sh: no point to run" >&2; exit 2; }

media_s=60
log "curve: making ${media_s} s of 1280x720 H.264 2400k + AAC 128k with noise"
bench_make_media "$work/media/curve.flv" "$media_s" 2400k
media_kbit=$(python3 -c "import os,sys; print(round(os.path.getsize(sys.argv[1])*8/float(sys.argv[2])/1000))" \
  "$work/media/curve.flv" "$media_s")
ramp_s=$(( (players + 399) / 400 + 1 ))
load_s=$(( ramp_s + seconds + 1 ))
cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
machine="$(nproc) cores, ${cpu_model:-unknown CPU}, Linux $(uname -r), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
cat > "$out/meta.json" <<JSON
{"machine": "$machine", "sluice_commit": "$commit", "sluice_built": "$sluice_built", "srs": "$srs_version", "srs_mw_msgs": "${SRS_MW_MSGS:-}",
 "players": $players, "probes": $probes, "seconds": $seconds, "reps": $reps, "media_kbit": $media_kbit,
 "read_batch_ms": $read_batch, "read_mode": "$read_mode", "points": "${points[*]}",
 "started": "$(date -u +%Y-%m-%dT%H:%M:%SZ)", "uptime_start": "$(uptime)"}
JSON
log "curve: sluice $commit; SRS ${srs_version:-not built}; machine: $machine"
log "curve: $players players ($read_mode) + $probes delay probes, $seconds s per run, $reps repetition(s); media ${media_kbit} kbit/s"
log "curve: points: ${points[*]}; results in $out"

server_pid=""; port=""; setting=""
start_point() {  # start_point SERVER VALUE: the server for one point, its config recorded in $setting
  local server=$1 value=$2
  port=$(bench_free_port)
  if [ "$server" = sluice ]; then
    if [ "$value" = adaptive ]; then
      (unset SLUICE_WRITE_DELAY SLUICE_WRITE_BUDGET; bench_sluice_config "$work/sluice.yaml" "$port" "$work/media")
    elif [[ "$value" == a* ]]; then
      (unset SLUICE_WRITE_BUDGET; SLUICE_WRITE_DELAY="${value#a}ms" bench_sluice_config "$work/sluice.yaml" "$port" "$work/media")
    elif [[ "$value" == b* ]]; then
      (unset SLUICE_WRITE_DELAY; SLUICE_WRITE_BUDGET="${value#b}" bench_sluice_config "$work/sluice.yaml" "$port" "$work/media")
    else
      SLUICE_WRITE_DELAY="${value}ms" SLUICE_WRITE_BUDGET=0 bench_sluice_config "$work/sluice.yaml" "$port" "$work/media"
    fi
    setting=$(grep 'player_queue' "$work/sluice.yaml" | sed 's/^ *//')
    "$sluice" --config "$work/sluice.yaml" >>"$out/sluice.log" 2>&1 &
  else
    # time_jitter off: SRS would otherwise restart each player's timestamps near zero, and the
    # probes match messages by timestamp.
    if [[ "$value" == */* ]]; then
      SRS_MW_LATENCY=${value%/*} SRS_MW_MSGS=${value#*/} srs_write_config "$work/srs/srs.conf" "$port" "$work/srs" "time_jitter off;"
    else
      SRS_MW_LATENCY=$value srs_write_config "$work/srs/srs.conf" "$port" "$work/srs" "time_jitter off;"
    fi
    setting=$(sed -n '/play {/,/}/p' "$work/srs/srs.conf" | grep -v '[{}]' | sed 's/^ *//' | tr '\n' ' ')
    (cd "$work/srs" && srs_exec "$work/bin/srs" -c "$work/srs/srs.conf") >>"$out/srs.log" 2>&1 &
  fi
  server_pid=$!; pids+=("$server_pid")
}
sys_busy() { awk '/^cpu / {print $2+$3+$4+$7+$8+$9; exit}' /proc/stat; }
ticks=$(getconf CLK_TCK)

run_point() {  # run_point SERVER VALUE REP
  local server=$1 value=$2 rep=$3 note="" tag="$1-${2//\//m}-$3"
  local idle=0 peak=0 hwm=0 cpu0=0 cpu1=0 busy0 busy1 load t0 t1 r lrc=0 prc=0 bpid ppid
  start_point "$server" "$value"
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  busy0=$(sys_busy); busy1=$busy0; t0=$(date +%s.%N)
  if ! bench_wait_port "$port" 10; then
    note="server did not start"
  else
    idle=$(bench_rss "$server_pid"); peak=$idle; cpu0=$(bench_cpu_ticks "$server_pid")
    busy0=$(sys_busy); t0=$(date +%s.%N)
    "$bench" play -n "$players" --rate 400 -d "$load_s" -q --allow-failures "$players" \
      --read-batch-ms "$read_batch" --json "$out/load-$tag.json" "rtmp://127.0.0.1:$port/live/curve" \
      >"$out/load-$tag.txt" 2>&1 &
    bpid=$!; pids+=("$bpid")
    sleep "$ramp_s"
    # Runs until stopped after the players have left (its -d is only a bound).
    "$bench" latency -n "$probes" -d "$(( seconds + 30 ))" -q --allow-failures "$probes" -f "$work/media/curve.flv" \
      --json "$out/probe-$tag.json" "rtmp://127.0.0.1:$port/live/curve" >"$out/probe-$tag.txt" 2>&1 &
    ppid=$!; pids+=("$ppid")
    while kill -0 "$bpid" 2>/dev/null; do
      r=$(bench_rss "$server_pid" 2>/dev/null || echo 0); [ "${r:-0}" -gt "$peak" ] && peak=$r
      sleep 0.25
    done
    wait "$bpid" || lrc=$?
    if kill -0 "$server_pid" 2>/dev/null; then
      cpu1=$(bench_cpu_ticks "$server_pid"); hwm=$(bench_hwm "$server_pid")
    else
      cpu1=$cpu0; note="server died"
    fi
    busy1=$(sys_busy)
    kill -TERM "$ppid" 2>/dev/null || true
    wait "$ppid" || prc=$?
  fi
  t1=$(date +%s.%N)
  bench_stop "$server_pid"; server_pid=""
  python3 "$root/bench/compare.py" curve-record "$out" "$out/load-$tag.json" "$out/probe-$tag.json" \
    server="$server" value="$value" rep="$rep" setting="$setting" players="$players" probes="$probes" \
    load_rc="$lrc" probe_rc="$prc" cpu_ticks="$(( cpu1 - cpu0 ))" busy_ticks="$(( busy1 - busy0 ))" ticks="$ticks" \
    t0="$t0" t1="$t1" idle_rss_kb="$idle" sampled_rss_kb="$peak" hwm_kb="$hwm" loadavg="$load" note="$note"
}

t_start=$(date +%s)
for rep in $(seq 1 "$reps"); do
  for p in "${points[@]}"; do run_point "${p%%:*}" "${p#*:}" "$rep"; done
done
log "curve: done in $(( $(date +%s) - t_start )) s; load at end: $(uptime)"
python3 "$root/bench/compare.py" curve-report "$out" | tee "$out/report.md"
echo "(per-run outputs and JSON: $out; the medians as JSON: $out/curve.json)"
