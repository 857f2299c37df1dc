#!/usr/bin/env bash
# Builds SRS (github.com/ossrs/srs, the C++ media server on state-threads) as a benchmark peer for
# bench/compare.sh and bench/latency_curve.sh, in a folder outside this repository, and prints the
# path of the binary. docs/benchmarks.md ("SRS as a peer") says why these flags.
#
# Usage: bench/peers/build_srs.sh [--force]
#   SLUICE_PEERS_DIR  where peers are built (default ~/.cache/sluice-peers); SRS goes to DIR/srs
#   SRS_SOURCE        the source: an SRS checkout (a directory with trunk/configure) or a git dir
#                     (bare or not; its SRS_REF, default HEAD, is checked out there).
#                     Unset: git clone --depth 1 https://github.com/ossrs/srs (needs the network).
#   --force           remove DIR/srs and build again
# Idempotent: a binary built with the same configure flags is reused (nothing is rebuilt).
# Installs the tools SRS's configure checks for (automake, patch, unzip, ...) and libssl-dev with
# apt-get when they are missing (sudo when not root). Nothing is downloaded by the build itself:
# WebRTC, SRT, GB28181 and FFmpeg are off and OpenSSL is the system's (--sys-ssl=on).
#
# Sourced (`. bench/peers/build_srs.sh`), it builds nothing and only defines the helpers the bench
# scripts use to run the result: srs_peer_dir, srs_default_bin, srs_write_config, srs_exec.

# srs_peer_dir: where SRS is (or will be) built.
srs_peer_dir() { printf '%s/srs\n' "${SLUICE_PEERS_DIR:-$HOME/.cache/sluice-peers}"; }

# srs_default_bin: the binary the bench scripts run: SRS_BIN, or the one this script builds.
srs_default_bin() { printf '%s\n' "${SRS_BIN:-$(srs_peer_dir)/trunk/objs/srs}"; }

# srs_write_config FILE PORT DIR [DIRECTIVE...]: a configuration for a fair run beside Sluice and
# nginx-rtmp: RTMP on 127.0.0.1:PORT, foreground, warnings only on the console, 10000 connections
# (the default 1000 refuses a 1000-player run), no HTTP API or server, GOP cache on. SRS_MW_LATENCY
# (ms) and SRS_MW_MSGS set play.mw_latency and play.mw_msgs (merged writes; unset: SRS's defaults,
# 350 ms and 8 messages). Each DIRECTIVE (e.g. "time_jitter off;") is added to the play section.
# The pid file goes to DIR.
srs_write_config() {
  local file=$1 port=$2 dir=$3 play="" d
  shift 3
  [ -n "${SRS_MW_LATENCY:-}" ] && play+="    mw_latency ${SRS_MW_LATENCY};"$'\n'
  [ -n "${SRS_MW_MSGS:-}" ] && play+="    mw_msgs ${SRS_MW_MSGS};"$'\n'
  for d in "$@"; do play+="    $d"$'\n'; done
  cat > "$file" <<CONF
listen 127.0.0.1:$port;
max_connections 10000;
daemon off;
pid $dir/srs.pid;
srs_log_tank console;
srs_log_level warn;
http_api { enabled off; }
http_server { enabled off; }
vhost __defaultVhost__ {
  play {
    gop_cache on;
${play}  }
}
CONF
}

# srs_exec BIN ARGS...: runs SRS without any SRS_* variable in its environment (SRS reads them as
# overrides of its configuration: SRS_LISTEN, SRS_VHOST_PLAY_MW_LATENCY, ...). Replaces the shell:
# call it in a subshell or in the background.
srs_exec() {
  local v unset=()
  for v in $(compgen -e); do
    case "$v" in SRS_*) unset+=(-u "$v") ;; esac
  done
  exec env ${unset[@]+"${unset[@]}"} "$@"
}

# Sourced: the helpers only.
if [ "${BASH_SOURCE[0]}" != "$0" ]; then
  return 0
fi

set -euo pipefail
force=0
case "${1:-}" in
  --force) force=1 ;;
  "") ;;
  -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "build_srs.sh: unknown argument $1 (--force, --help)" >&2; exit 2 ;;
esac

root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/bench/lib.sh"
dir=$(realpath -m "$(srs_peer_dir)")
case "$dir/" in
  "$root/"*) echo "build_srs.sh: $dir is inside the repository; set SLUICE_PEERS_DIR to a folder outside it" >&2; exit 2 ;;
esac
mkdir -p "$(dirname "$dir")"
flags=(--rtc=off --srt=off --gb28181=off --ffmpeg-fit=off --sanitizer=off --sys-ssl=on --utest=off
       --gcov=off --jobs=2 --extra-flags=-O2)
bin="$dir/trunk/objs/srs"
stamp="$dir/.sluice-build"
want="configure ${flags[*]}"

if [ "$force" = 1 ]; then
  rm -rf "$dir"
elif [ -x "$bin" ] && [ -f "$stamp" ] && [ "$(head -1 "$stamp")" = "$want" ]; then
  echo "$bin"
  exit 0
fi

# --- tools: what SRS's configure (trunk/auto/depends.sh) checks for, and the OpenSSL headers ------
need=()
for t in perl:perl gcc:gcc g++:g++ make:make patch:patch unzip:unzip automake:automake \
         pkg-config:pkg-config tar:tar; do
  command -v "${t%%:*}" >/dev/null 2>&1 || need+=("${t#*:}")
done
dpkg-query -W -f='${Status}' libssl-dev 2>/dev/null | grep -q "install ok installed" || need+=(libssl-dev)
bench_apt_install build_srs.sh ${need[@]+"${need[@]}"}

# --- the source -----------------------------------------------------------------------------------
if [ ! -f "$dir/trunk/configure" ]; then
  rm -rf "$dir"
  tmp="$dir.tmp-$$"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  trap 'rm -rf "$tmp"' EXIT
  src=${SRS_SOURCE:-}
  gitdir=""
  if [ -n "$src" ] && [ ! -f "$src/trunk/configure" ]; then
    for g in "$src" "$src/.git"; do
      if git --git-dir="$g" rev-parse --verify -q "${SRS_REF:-HEAD}^{commit}" >/dev/null 2>&1; then gitdir=$g; break; fi
    done
  fi
  if [ -n "$src" ] && [ -f "$src/trunk/configure" ]; then
    echo "build_srs.sh: copying the SRS checkout $src" >&2
    tar -C "$src" --exclude=./.git -cf - . | tar -x -C "$tmp"
    git -C "$src" rev-parse HEAD >"$tmp/.sluice-source" 2>/dev/null || echo "$src" >"$tmp/.sluice-source"
  elif [ -n "$gitdir" ]; then
    src=$gitdir
    commit=$(git --git-dir="$src" rev-parse "${SRS_REF:-HEAD}^{commit}")
    echo "build_srs.sh: exporting $commit from the git dir $src" >&2
    # A snapshot may lack some large blobs (an OpenSSL 1.0.2 tarball, a sample FLV) that this build
    # does not use, and git archive stops at a missing blob: check the tree out through a private
    # index instead (nothing is written to the git dir), without the paths whose blobs are missing.
    git --git-dir="$src" ls-tree -r "$commit" >"$tmp/.tree"
    awk '$2 == "blob" {print $3}' "$tmp/.tree" | git --git-dir="$src" cat-file --batch-check |
      awk '$2 == "missing" {print $1}' >"$tmp/.missing"
    missing=()
    while IFS=$'\t' read -r _ path; do
      missing+=("$path")
      echo "build_srs.sh: $path is missing from the snapshot (not needed), left out" >&2
    done < <(awk -F'\t' 'NR == FNR {m[$1] = 1; next} {split($1, a, " "); if (a[3] in m) print}' "$tmp/.missing" "$tmp/.tree")
    (
      export GIT_INDEX_FILE="$tmp/.index"
      git --git-dir="$src" read-tree "$commit"
      [ ${#missing[@]} -eq 0 ] || git --git-dir="$src" update-index --force-remove -- "${missing[@]}"
      git --git-dir="$src" --work-tree="$tmp" checkout-index -a
    )
    rm -f "$tmp/.tree" "$tmp/.missing" "$tmp/.index"
    echo "$commit" >"$tmp/.sluice-source"
  elif [ -n "$src" ]; then
    echo "build_srs.sh: SRS_SOURCE=$src is neither an SRS checkout (no trunk/configure) nor a git dir" >&2
    exit 1
  else
    echo "build_srs.sh: cloning https://github.com/ossrs/srs (depth 1)" >&2
    rmdir "$tmp"
    if ! git clone -q --depth 1 https://github.com/ossrs/srs "$tmp"; then
      echo "build_srs.sh: cannot clone https://github.com/ossrs/srs (offline?): set SRS_SOURCE to an SRS checkout or git dir" >&2
      exit 1
    fi
    git -C "$tmp" rev-parse HEAD >"$tmp/.sluice-source"
    rm -rf "$tmp/.git"
  fi
  mv "$tmp" "$dir"
  trap - EXIT
fi

# --- configure and make (about a minute on 2 cores; configure compiles state-threads) -------------
# SRS's configure compiles with -g -O0 unless told otherwise; --extra-flags comes after its own
# flags, so -O2 wins, for state-threads too.
log="$dir/build.log"
echo "build_srs.sh: building in $dir/trunk (log: $log)" >&2
rm -f "$stamp"
if ! (cd "$dir/trunk" && ./configure "${flags[@]}" && make -j2) >"$log" 2>&1; then
  tail -20 "$log" >&2
  echo "build_srs.sh: the SRS build failed (whole log: $log)" >&2
  exit 1
fi
[ -x "$bin" ] || { echo "build_srs.sh: the build finished but $bin is not there (log: $log)" >&2; exit 1; }
{ echo "$want"; cat "$dir/.sluice-source" 2>/dev/null || true; date -u +%Y-%m-%dT%H:%M:%SZ; } >"$stamp"
echo "$bin"
