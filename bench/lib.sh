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
# hold's ceiling), SLUICE_WRITE_BUDGET player_queue.write_budget (0: always the ceiling) and
# SLUICE_IO_URING (true|false) rtmp.io_uring. Unset, they are the server's defaults.
bench_sluice_config() {
  cat > "$1" <<YAML
workers: ${SLUICE_WORKERS:-1}
rtmp:
  listen: 127.0.0.1:$2
  chunk_size: 4096
  player_queue: { write_delay: ${SLUICE_WRITE_DELAY:-100ms}, write_budget: ${SLUICE_WRITE_BUDGET:-10000} }
  io_uring: ${SLUICE_IO_URING:-true}
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
# `pids` array, wait for them, and remove the caller's `$work` directory.
bench_cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
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
