#!/usr/bin/env bash
# Installs the Debian packages Sluice needs, by profile:
#   tools/install-deps.sh build   building and running the server (`make release`, `make run`,
#                                 `make deb`): compiler, cmake, pkg-config, ccache, the -dev
#                                 libraries, npm, python3
#   tools/install-deps.sh test    build, plus what the tests need (`make test`, `make unit`,
#                                 `make fuzz`): doctest, clang-14 and lld for the sanitizer build,
#                                 clang-format-14 (format_test), and the real peers the tests
#                                 drive (ffmpeg, rtmpdump, GStreamer, Chromium, VLC as an HLS
#                                 player, nginx with the RTMP module as a foreign relay peer,
#                                 Redis and HAProxy for the cluster, lintian and systemd-analyze
#                                 for the package, goaccess for the access log's format,
#                                 prometheus and promtool for deploy/prometheus and the
#                                 Grafana dashboard's queries, ...)
# Without an argument: test (everything).
# Idempotent: does nothing when every package of the profile is already installed (and npm is on
# PATH). Uses sudo when not root.
set -euo pipefail

profile=${1:-test}
case "$profile" in
  build | test) ;;
  *) echo "usage: tools/install-deps.sh [build|test]" >&2; exit 2 ;;
esac

# Every build configures tools/, and tools/librtmp_player.c needs librtmp-dev (tools/CMakeLists.txt).
packages=(
  build-essential cmake pkg-config ccache
  libuv1-dev liburing-dev libssl-dev libyaml-cpp-dev libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  librtmp-dev libhttp-parser-dev libcurl4-openssl-dev libhiredis-dev libsrt-openssl-dev
  libsrtp2-dev libavcodec-dev libavutil-dev libswresample-dev libswscale-dev libopus-dev
  libsystemd-dev
)
# `make deb` (docs/deploy.md): python3 writes the man page and the packaged configuration at build
# time, CPack's DEB generator needs file and dpkg-shlibdeps (dpkg-dev, with build-essential).
packages+=(python3 file)
# intel-ipsec-mb seals AES-GCM TLS records several times faster than OpenSSL 3.0 (server/CMakeLists.txt).
# Debian builds it for amd64 only; elsewhere OpenSSL does it.
if [ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ]; then
  packages+=(libipsec-mb-dev)
fi
# npm installs mpegts.js for the built-in web page at build time (web/CMakeLists.txt). Debian's npm
# package only when there is none: a machine with NodeSource's nodejs has npm already, and Debian's
# npm would conflict with it. (Node.js 20 or later is what web/package-lock.json's packages want.)
if ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi
if [ "$profile" = test ]; then
  packages+=(
    doctest-dev
    clang-14 libclang-rt-14-dev lld-14 clang-format-14
    ffmpeg rtmpdump curl python3 python3-yaml openssl
    nginx libnginx-mod-rtmp
    redis-server haproxy srt-tools iproute2
    gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-plugins-ugly
    gstreamer1.0-libav gstreamer1.0-nice python3-gst-1.0 gir1.2-gst-plugins-bad-1.0
    chromium
    vlc-bin vlc-plugin-base
    lintian systemd
    goaccess
    prometheus
  )
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps ($profile): installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
