# Shared helpers for the bench/ scripts (players.sh, compare.sh, scaling.sh, ...). Source it from bash:
#   . "$(dirname "$0")/lib.sh"
# Nothing here starts a process that outlives its caller: callers keep the PIDs and clean up.

# bench_make_media FILE SECONDS VIDEO_BITRATE
# A noisy 1280x720 25 fps H.264 (GOP 2 s) + 128k AAC FLV, so the bitrate is real (a test pattern
# without noise compresses to almost nothing).
bench_make_media() {
  local file=$1 length=$2 bitrate=$3
  ffmpeg -nostdin -loglevel error -y -f lavfi -i "testsrc=size=1280x720:rate=25:duration=$length" -f lavfi \
    -i "sine=duration=$length" -vf noise=alls=20:allf=t -c:v libx264 -preset ultrafast -g 50 -b:v "$bitrate" \
    -maxrate "$bitrate" -bufsize "$bitrate" -pix_fmt yuv420p -c:a aac -b:a 128k -f flv "$file"
}

# bench_publish FILE URL LOG: ffmpeg publishes FILE to URL in real time, looping, in the
# background (output appended to LOG). Its PID is in $! afterwards, for the caller to keep.
bench_publish() {
  ffmpeg -nostdin -loglevel error -re -stream_loop -1 -i "$1" -c copy -f flv "$2" >>"$3" 2>&1 &
}

# bench_free_port: a free TCP port on 127.0.0.1 (the kernel's choice).
bench_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# bench_wait_port PORT [SECONDS]: wait until something accepts on 127.0.0.1:PORT.
bench_wait_port() {
  local port=$1 tries=$(( ${2:-10} * 10 ))
  while [ "$tries" -gt 0 ]; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    sleep 0.1; tries=$(( tries - 1 ))
  done
  return 1
}

# bench_cpu_ticks PID: user + system CPU time of the whole process (all threads), in clock ticks.
bench_cpu_ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }

# bench_rss PID / bench_hwm PID: resident set size now / at its peak (VmHWM), in KiB.
bench_rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
bench_hwm() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }

# bench_sluice_config FILE PORT MEDIA_DIR: RTMP only, a live and a vod app. One worker loop
# unless SLUICE_WORKERS says otherwise; SLUICE_WRITE_DELAY overrides player_queue.write_delay (the
# hold's ceiling), SLUICE_WRITE_BUDGET player_queue.write_budget (0: always the ceiling),
# SLUICE_WRITE_LANES player_queue.write_lanes (1: one pass per hold) and
# SLUICE_IO_URING (true|false) rtmp.io_uring. Unset, they are the server's defaults. With
# SLUICE_HTTP_PORT set, HTTP listens there too (HTTP-FLV, downloads of MEDIA_DIR, the API for anyone).
# bench_player_queue_keys: the rtmp.player_queue keys the environment sets (SLUICE_WRITE_DELAY,
# SLUICE_WRITE_BUDGET, SLUICE_WRITE_LANES), as "key: value, ..."; empty when none is set, so a
# run takes the defaults of the build it runs.
bench_player_queue_keys() {
  local keys=""
  [ -z "${SLUICE_WRITE_DELAY:-}" ] || keys="write_delay: $SLUICE_WRITE_DELAY"
  [ -z "${SLUICE_WRITE_BUDGET:-}" ] || keys="${keys:+$keys, }write_budget: $SLUICE_WRITE_BUDGET"
  [ -z "${SLUICE_WRITE_LANES:-}" ] || keys="${keys:+$keys, }write_lanes: $SLUICE_WRITE_LANES"
  echo "$keys"
}

bench_sluice_config() {
  local http="" queue
  queue=$(bench_player_queue_keys)
  [ -z "${SLUICE_HTTP_PORT:-}" ] || http="http: { listen: 127.0.0.1:$SLUICE_HTTP_PORT, api: { allow: [] } }"
  cat > "$1" <<YAML
workers: ${SLUICE_WORKERS:-1}
rtmp:
  listen: 127.0.0.1:$2
  chunk_size: 4096
  player_queue: {${queue:+ $queue }}
  io_uring: ${SLUICE_IO_URING:-true}
$http
apps:
  live: { type: live }
  vod: { type: vod, root: $3 }
log:
  level: warn
YAML
}

# bench_stop PID [SECONDS]: SIGTERM, then SIGKILL if it has not exited after SECONDS (default 5).
bench_stop() {
  local pid=$1 tries=$(( ${2:-5} * 10 ))
  kill "$pid" 2>/dev/null || return 0
  while kill -0 "$pid" 2>/dev/null && [ "$tries" -gt 0 ]; do sleep 0.1; tries=$(( tries - 1 )); done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# bench_trap_cleanup: on exit (and on Ctrl-C, with status 130) stop every PID in the caller's
# `pids` array, wait for them, remove the caller's `$work` directory and its CPU cgroup, if any.
bench_cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
  bench_cgroup_remove
}
bench_trap_cleanup() {
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
}

# bench_apt_install SCRIPT PACKAGE...: installs Debian packages with apt-get (sudo when not root);
# SCRIPT names the caller in messages. No packages: nothing to do.
bench_apt_install() {
  local who=$1; shift
  [ $# -gt 0 ] || return 0
  echo "$who: installing $*" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "$who: need root or sudo to install $*" >&2; exit 1; }
    sudo=sudo
  fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# A CPU cgroup for the server (bench/scaling.sh, bench/http_scaling.sh): bench_cgroup_create NAME
# makes it, bench_cgroup_limit CORES PID gives it a quota and moves PID in, bench_cgroup_remove
# (on exit) removes it. Needs root or sudo.
bench_cgroup=""
bench_sudo=""
[ "$(id -u)" -eq 0 ] || bench_sudo=sudo
# The server's CPU cgroup: v2 (cpu.max) when the unified hierarchy has the cpu controller, else
# v1's cpu controller (cpu.cfs_quota_us).
bench_cgroup_create() {  # bench_cgroup_create NAME
  local name="sluice-$1-$$"
  if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
    grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control ||
      echo +cpu | $bench_sudo tee /sys/fs/cgroup/cgroup.subtree_control >/dev/null
    bench_cgroup=/sys/fs/cgroup/$name
    $bench_sudo mkdir -p "$bench_cgroup"
  elif [ -d /sys/fs/cgroup/cpu ]; then
    bench_cgroup=/sys/fs/cgroup/cpu/$name
    $bench_sudo mkdir -p "$bench_cgroup"
  else
    echo "bench: no CPU cgroup controller found under /sys/fs/cgroup" >&2
    exit 1
  fi
}
bench_cgroup_v1_quota() {  # bench_cgroup_v1_quota DIR PERIOD_US QUOTA_US
  echo "$2" | $bench_sudo tee "$1/cpu.cfs_period_us" >/dev/null
  echo "$3" | $bench_sudo tee "$1/cpu.cfs_quota_us" >/dev/null
}
bench_cgroup_limit() {  # bench_cgroup_limit CORES PID
  local us
  us=$(python3 -c "print(int(round($1 * 100000)))")
  if [ -f "$bench_cgroup/cpu.max" ]; then
    echo "$us 100000" | $bench_sudo tee "$bench_cgroup/cpu.max" >/dev/null
  else
    bench_cgroup_v1_quota "$bench_cgroup" 100000 "$us"
  fi
  echo "$2" | $bench_sudo tee "$bench_cgroup/cgroup.procs" >/dev/null
}
# bench_cgroup_limit_loops CORES PID LOOPS: each worker loop's thread in a cgroup of its own with CORES
# (loop 0 is the main thread, the others are named sluice-loop-N by the server), under a parent
# with CORES x loops. Threads started later (libuv's threadpool, on its first file job) join the
# group of the loop that started them, as cgroup v1 places new threads. Two loops then cannot
# eat each other's quota within a CFS period, which a shared quota lets them do. cgroup v1 only
# (v2 places threads only in threaded subtrees): on v2 it falls back to bench_cgroup_limit.
# BENCH_CFS_PERIOD_US (default 100000) sets the period of every group.
bench_cgroup_loops=()
bench_cgroup_limit_loops() {  # bench_cgroup_limit_loops CORES PID LOOPS
  local cores=$1 pid=$2 loops=$3 tids=() tid comm period=${BENCH_CFS_PERIOD_US:-100000} us i dir tries=0
  # The listeners are up before the loop threads start: wait for all of them.
  while :; do
    tids=()
    for tid in /proc/"$pid"/task/*; do
      tid=${tid##*/}
      comm=$(cat /proc/"$pid"/task/"$tid"/comm 2>/dev/null || true)
      if [ "$tid" = "$pid" ] || [[ "$comm" == sluice-loop-* ]]; then tids+=("$tid"); fi
    done
    [ "${#tids[@]}" -ge "$loops" ] && break
    tries=$(( tries + 1 ))
    [ "$tries" -lt 50 ] || { echo "bench: $pid runs ${#tids[@]} loop threads, not $loops" >&2; return 1; }
    sleep 0.1
  done
  if [ -f "$bench_cgroup/cpu.max" ]; then
    echo "bench: cgroup v2, one quota for the whole server (per-loop quotas need cgroup v1)" >&2
    bench_cgroup_limit "$(python3 -c "print($cores * ${#tids[@]})")" "$pid"
    return
  fi
  us=$(python3 -c "print(int(round($cores * $period)))")
  bench_cgroup_v1_quota "$bench_cgroup" "$period" $(( us * ${#tids[@]} ))
  echo "$pid" | $bench_sudo tee "$bench_cgroup/cgroup.procs" >/dev/null
  i=0
  for tid in "${tids[@]}"; do
    dir=$bench_cgroup/loop$i
    $bench_sudo mkdir -p "$dir"
    bench_cgroup_v1_quota "$dir" "$period" "$us"
    echo "$tid" | $bench_sudo tee "$dir/tasks" >/dev/null
    bench_cgroup_loops+=("$dir")
    i=$(( i + 1 ))
  done
}
# bench_cgroup_loop_stats PID LOOPS: one line per loop of bench_cgroup_limit_loops, "TICKS PERIODS
# THROTTLED": the CPU ticks of the threads in that loop's group (its loop thread and the
# threadpool threads it started), and the group's CFS periods and throttled periods so far.
bench_cgroup_loop_stats() {  # bench_cgroup_loop_stats PID LOOPS
  local pid=$1 i dir tid ticks periods throttled
  for (( i = 0; i < $2; i++ )); do
    dir=$bench_cgroup/loop$i ticks=0 periods=0 throttled=0
    if [ -f "$dir/tasks" ]; then
      for tid in $(cat "$dir/tasks"); do
        ticks=$(( ticks + $(bench_cpu_ticks "$pid/task/$tid" 2>/dev/null || echo 0) ))
      done
      periods=$(awk '$1 == "nr_periods" {print $2}' "$dir/cpu.stat")
      throttled=$(awk '$1 == "nr_throttled" {print $2}' "$dir/cpu.stat")
    fi
    echo "$ticks $periods $throttled"
  done
}
bench_cgroup_remove() {
  local dir
  for dir in ${bench_cgroup_loops[@]+"${bench_cgroup_loops[@]}"}; do
    [ -d "$dir" ] && $bench_sudo rmdir "$dir" 2>/dev/null || true
  done
  [ -n "$bench_cgroup" ] && [ -d "$bench_cgroup" ] && $bench_sudo rmdir "$bench_cgroup" 2>/dev/null || true
}
