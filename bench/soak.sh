#!/usr/bin/env bash
# Soak test: one live publisher and N players against a release build of Sluice on 127.0.0.1 for a
# long time, sampling the server's RSS and CPU, to show that memory stays flat and nothing stalls.
#
# Usage: bench/soak.sh [--duration SECONDS] [--players N] [--interval S] [--out DIR]
#                      [--rate R] [--bitrate B] [--allow-growth PCT] [--max-slope PCT]
#                      [--nice N] [--build-dir DIR]
#   --duration SECONDS  how long the players play (default 600 = 10 minutes; 3600 for a release)
#   --players N         players, all in one sluice-bench process (default 500)
#   --interval S        seconds between samples of the server's RSS and CPU (default 5)
#   --out DIR           where everything goes (default /tmp/sluice-soak-DATE; kept)
#   --rate R            player ramp-up, connections per second (default 250)
#   --bitrate B         video bitrate of the generated media (default 2400k; + 128k AAC = ~2.5 Mb/s)
#   --allow-growth PCT  RSS flatness: fail when the server's anonymous RSS (RssAnon), fitted by
#                       least squares over the second half of the run, rises across that half by
#                       more than PCT % of the mean RSS (default 5) ...
#   --max-slope PCT     ... or by more than PCT % of the mean RSS per 10 minutes, when that is more
#                       (default 1; it takes over past 100 minutes). bench/soak_report.py explains.
#   --nice N            run sluice, the publisher and the players at this nice value (default -10
#                       as root, 0 otherwise): on a busy shared machine, other work at the normal
#                       priority starves the bench of CPU, and the players then count stalls that
#                       are not the server's. These three use well under one core between them.
#   --build-dir DIR     take DIR/server/sluice and DIR/bench/load/sluice-bench as they are
#                       (default: make release, then build/release)
# Writes samples.csv (one row per interval), summary.txt and soak.png (RSS and CPU against time) in
# --out DIR, with the bench's and the publisher's JSON and logs, and prints the summary.
# Exit status: 0 when RSS is flat and no player failed or stalled, 1 when not, 2 on a usage error.
# Every wait is bounded (the sampling loop stops at the duration plus 60 s whatever happens); all
# traffic is on 127.0.0.1; only the processes started here are stopped, by PID, on exit.
set -euo pipefail

duration=600
players=500
interval=5
out=""
rate=250
bitrate=2400k
max_slope=1
allow_growth=5
build_dir=""
niceness=0
[ "$(id -u)" -eq 0 ] && niceness=-10
usage() { sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=${2:-}; shift 2 ;;
    --players) players=${2:-}; shift 2 ;;
    --interval) interval=${2:-}; shift 2 ;;
    --out) out=${2:-}; shift 2 ;;
    --rate) rate=${2:-}; shift 2 ;;
    --bitrate) bitrate=${2:-}; shift 2 ;;
    --max-slope) max_slope=${2:-}; shift 2 ;;
    --allow-growth) allow_growth=${2:-}; shift 2 ;;
    --build-dir) build_dir=${2:-}; shift 2 ;;
    --nice) niceness=${2:-}; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "soak.sh: unknown argument $1" >&2; usage ;;
  esac
done
posint() { case "$2" in ''|*[!0-9]*|0) echo "soak.sh: $1 needs a positive integer" >&2; exit 2 ;; esac; }
posint --duration "$duration"; posint --players "$players"; posint --interval "$interval"; posint --rate "$rate"
[ "$duration" -ge $(( 4 * interval )) ] || { echo "soak.sh: --duration must be at least 4 intervals" >&2; exit 2; }
[ "$duration" -le 86400 ] || { echo "soak.sh: --duration is at most 86400" >&2; exit 2; }
case "$niceness" in ''|-|*[!0-9-]*|?*-*) echo "soak.sh: --nice needs an integer" >&2; exit 2 ;; esac
for v in "$max_slope" "$allow_growth"; do
  case "$v" in ''|*[!0-9.]*) echo "soak.sh: --max-slope and --allow-growth need a number" >&2; exit 2 ;; esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
[ -n "$out" ] || out="/tmp/sluice-soak-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
out=$(cd "$out" && pwd)
log() { echo "soak: $*" | tee -a "$out/run.log" >&2; }

# --- prerequisites ------------------------------------------------------------------------------
# The plot uses matplotlib rather than gnuplot: the summary (least-squares slope, steady-state
# figures, the bench's JSON) is computed in Python anyway, so one short Python file does both, and
# the figure (two panels on one time axis, the fitted line drawn over the RSS) needs no gnuplot
# multiplot script. Debian's python3-matplotlib lives in Debian's interpreter, /usr/bin/python3,
# which a pyenv or venv `python3` earlier in PATH would not see: use that one explicitly.
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
need=()
command -v ffmpeg >/dev/null 2>&1 || need+=(ffmpeg)
"$py" -c 'import matplotlib' 2>/dev/null || need+=(python3-matplotlib)
if [ ${#need[@]} -gt 0 ]; then
  bench_apt_install soak.sh "${need[@]}"
  py=/usr/bin/python3
fi

if [ -z "$build_dir" ]; then
  # The tree may be shared: someone else's half-saved edit can break the build for a moment.
  for try in 1 2 3; do
    make -C "$root" release >"$out/build.log" 2>&1 && break
    [ "$try" = 3 ] && { tail -20 "$out/build.log" >&2; echo "soak.sh: make release failed" >&2; exit 1; }
    log "make release failed (attempt $try), retrying in 30 s"
    sleep 30
  done
  build_dir="$root/build/release"
fi
for b in server/sluice bench/load/sluice-bench; do
  [ -x "$build_dir/$b" ] || { echo "soak.sh: no $build_dir/$b (make release, or --build-dir)" >&2; exit 1; }
done

work=$(mktemp -d /tmp/sluice-soak-work-XXXXXX)
pids=()
bench_trap_cleanup
# Private copies: a rebuild of the tree during an hour-long run must not change what is measured.
mkdir -p "$work/bin" "$work/media"
cp "$build_dir/server/sluice" "$build_dir/bench/load/sluice-bench" "$work/bin/"
sluice="$work/bin/sluice"
bench="$work/bin/sluice-bench"

# --- media: a 60 s loop, made now, deleted on exit ---------------------------------------------
loop_s=60
log "making ${loop_s} s of 1280x720 25 fps H.264 $bitrate + AAC 128k with noise"
bench_make_media "$work/media/loop.flv" "$loop_s" "$bitrate"
media_kbit=$("$py" -c "import os,sys; print(round(os.path.getsize(sys.argv[1])*8/float(sys.argv[2])/1000))" \
  "$work/media/loop.flv" "$loop_s")

# --- server and publisher -----------------------------------------------------------------------
port=$(bench_free_port)
bench_sluice_config "$out/sluice.yaml" "$port" "$work/media"
nice -n "$niceness" "$sluice" --config "$out/sluice.yaml" >"$out/sluice.log" 2>&1 &
server=$!; pids+=("$server")
bench_wait_port "$port" 10 || { echo "soak.sh: sluice did not start (see $out/sluice.log)" >&2; exit 1; }
url="rtmp://127.0.0.1:$port/live/soak"
# sluice-bench publish rather than ffmpeg -re -stream_loop: it loops with timestamps that keep
# increasing, paces against a fixed start instant (no drift over an hour), reports a publisher
# failure in its JSON, and costs little CPU. Its -d outlasts the players; it is stopped after them.
lead=3
nice -n "$niceness" "$bench" publish -q -d $(( duration + lead + 60 )) -f "$work/media/loop.flv" --json "$out/publisher.json" \
  "$url" >"$out/publisher.txt" 2>&1 &
publisher=$!; pids+=("$publisher")
sleep "$lead"   # connected, and a whole GOP (2 s) is in the server's cache
kill -0 "$publisher" 2>/dev/null || { cat "$out/publisher.txt" >&2; echo "soak.sh: the publisher exited" >&2; exit 1; }

ticks=$(getconf CLK_TCK)
cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
machine="$(nproc) cores, ${cpu_model:-unknown CPU}, Linux $(uname -r)"
sluice_version=$("$sluice" --version 2>/dev/null | head -1 || true)
idle_rss=$(bench_rss "$server")
idle_anon=$(awk '/^RssAnon/ {print $2}' "/proc/$server/status")
log "sluice $sluice_version on $url; media ${media_kbit} kb/s; $players players for $duration s, sample every $interval s"
log "machine: $machine; load $(cut -d' ' -f1-3 /proc/loadavg); results in $out"

# --- players and sampling -----------------------------------------------------------------------
# The bench's progress line (once a second) goes to bench.log: the players' view over time.
nice -n "$niceness" "$bench" play -n "$players" --rate "$rate" -d "$duration" --allow-failures "$players" \
  --json "$out/bench.json" "$url" >"$out/bench.txt" 2>"$out/bench.log" &
player_pid=$!; pids+=("$player_pid")

# sys_busy: jiffies the whole machine spent busy (all CPUs), from /proc/stat.
sys_busy() { awk '/^cpu / {print $2+$3+$4+$7+$8+$9; exit}' /proc/stat; }
now_us() { local t=${EPOCHREALTIME/./}; echo $(( 10#$t )); }
csv="$out/samples.csv"
echo "t_s,rss_kb,anon_kb,file_kb,cpu_ticks,cpu_pct,fds,threads,machine_busy_pct,load1,bench_rss_kb" > "$csv"
t0=$(now_us)
deadline=$(( t0 + (duration + 60) * 1000000 ))
prev_t=$t0; prev_cpu=$(bench_cpu_ticks "$server"); prev_busy=$(sys_busy)
k=0
while kill -0 "$player_pid" 2>/dev/null; do
  k=$(( k + 1 ))
  next=$(( t0 + k * interval * 1000000 ))
  now=$(now_us)
  # The bench ends at DURATION: a sample at that moment would catch the players leaving.
  [ $(( next - t0 )) -le $(( (duration - 1) * 1000000 )) ] || break
  # Sleep to the next slot (a fixed schedule: no drift), but notice the bench ending early.
  while [ "$now" -lt "$next" ] && kill -0 "$player_pid" 2>/dev/null; do
    gap=$(( next - now )); [ "$gap" -gt 500000 ] && gap=500000
    sleep "$(printf '0.%06d' "$gap")"
    now=$(now_us)
  done
  kill -0 "$player_pid" 2>/dev/null || break   # the run ended between samples: do not sample the goodbyes
  kill -0 "$server" 2>/dev/null || { log "sluice died"; break; }
  cpu=$(bench_cpu_ticks "$server"); busy=$(sys_busy)
  # VmRSS = RssAnon (heap, stacks: where a leak shows) + RssFile (code, libraries) + RssShmem.
  read -r rss anon file threads < <(awk '/^VmRSS/ {r=$2} /^RssAnon/ {a=$2} /^RssFile/ {f=$2}
    /^Threads/ {t=$2} END {print r, a, f, t}' "/proc/$server/status")
  fds=$(find "/proc/$server/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
  brss=$(bench_rss "$player_pid" 2>/dev/null || echo 0)
  now=$(now_us)
  dt=$(( now - prev_t ))
  cpu_pct=$(awk -v c=$(( cpu - prev_cpu )) -v hz="$ticks" -v dt="$dt" 'BEGIN {printf "%.2f", c / hz / (dt / 1e6) * 100}')
  busy_pct=$(awk -v c=$(( busy - prev_busy )) -v hz="$ticks" -v dt="$dt" 'BEGIN {printf "%.1f", c / hz / (dt / 1e6) * 100}')
  t_s=$(awk -v d=$(( now - t0 )) 'BEGIN {printf "%.2f", d / 1e6}')
  echo "$t_s,$rss,$anon,$file,$cpu,$cpu_pct,$fds,$threads,$busy_pct,$(cut -d' ' -f1 /proc/loadavg),${brss:-0}" >> "$csv"
  prev_t=$now; prev_cpu=$cpu; prev_busy=$busy
  if [ $(( k % (60 / interval > 0 ? 60 / interval : 1) )) -eq 0 ]; then
    log "t=${t_s}s rss=$(( rss / 1024 )) MB cpu=${cpu_pct}% fds=$fds machine=${busy_pct}% | $(tail -1 "$out/bench.log" 2>/dev/null | tr -d '\r')"
  fi
done
# Wait for the bench to finish (bounded: DURATION + 60 s after it started), then stop it if it has not.
while kill -0 "$player_pid" 2>/dev/null && [ "$(now_us)" -lt "$deadline" ]; do sleep 0.2; done
bench_rc=0
if kill -0 "$player_pid" 2>/dev/null; then
  log "the players are still running at duration + 60 s: stopping them"
  bench_stop "$player_pid" 10; bench_rc=124   # overran: stopped (it still wrote its summary)
else
  wait "$player_pid" 2>/dev/null || bench_rc=$?
fi

# After the players: does the memory come back? (freed to the allocator, not always to the kernel)
server_alive=1
sleep 3
if kill -0 "$server" 2>/dev/null; then
  after_rss=$(bench_rss "$server"); after_anon=$(awk '/^RssAnon/ {print $2}' "/proc/$server/status")
  after_fds=$(find "/proc/$server/fd" -mindepth 1 -maxdepth 1 | wc -l)
  hwm=$(bench_hwm "$server")
else
  server_alive=0; after_rss=0; after_anon=0; after_fds=0; hwm=0
fi
publisher_alive=1
kill -0 "$publisher" 2>/dev/null || publisher_alive=0
bench_stop "$publisher" 10
bench_stop "$server" 10

cat > "$out/meta.json" <<JSON
{"duration_s": $duration, "players": $players, "interval_s": $interval, "rate": $rate, "bitrate": "$bitrate",
 "media_kbit": $media_kbit, "max_slope_pct_per_10min": $max_slope, "allow_growth_pct": $allow_growth, "nice": $niceness, "idle_rss_kb": $idle_rss, "idle_anon_kb": $idle_anon,
 "after_rss_kb": $after_rss, "after_anon_kb": $after_anon, "after_fds": $after_fds, "hwm_kb": $hwm, "server_alive": $server_alive,
 "publisher_alive_at_end": $publisher_alive, "bench_rc": $bench_rc, "clk_tck": $ticks, "machine": "$machine",
 "sluice_version": "$sluice_version", "ended": "$(date -u +%Y-%m-%dT%H:%M:%SZ)"}
JSON
rc=0
"$py" "$root/bench/soak_report.py" "$out" || rc=$?
echo "(samples, logs, bench JSON and the plot: $out)"
exit "$rc"
