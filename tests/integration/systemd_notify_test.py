#!/usr/bin/python3
"""sd_notify for systemd's Type=notify unit (server/systemd_notify.cpp, docs/deploy.md). NOTIFY_SOCKET
points at a unix datagram socket this test binds, as systemd does:
1. READY=1 comes from the server's own process once every listener is bound: one connection to
   the RTMP port and one to the HTTP port, made right when it arrives, are accepted; its STATUS=
   line names both ports.
2. SIGTERM with shutdown.drain set and a player connected: STOPPING=1 (STATUS says it drains) while
   the process still runs (the drain holds it), then the process exits 0.
3. A NOTIFY_SOCKET nobody listens on: the server serves all the same and stops with status 0.
Without NOTIFY_SOCKET nothing is sent (every other test runs the server so)."""
import atexit
import os
import signal
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from rtmp_client import RtmpClient  # noqa: E402

sluice = binary("server/sluice")
version = subprocess.run([sluice, "--version"], capture_output=True, text=True, timeout=20).stdout
print(version)
if "libsystemd=yes" not in version:
    skip("this build has no libsystemd (install libsystemd-dev: tools/install-deps.sh build)")

d = workdir("notify")
rtmp_port, http_port = free_port(), free_port()
config = os.path.join(d, "sluice.yaml")
with open(config, "w") as f:
    f.write(f"rtmp:\n  listen: 127.0.0.1:{rtmp_port}\nhttp:\n  listen: 127.0.0.1:{http_port}\n"
            "apps:\n  live: { type: live, wait_for_publisher: true }\nshutdown:\n  drain: 3s\n")

notify_path = os.path.join(d, "notify.sock")
notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
notify.bind(notify_path)
# The sender's credentials on every datagram, as systemd checks them (NotifyAccess=main).
notify.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)


def receive(timeout):
    """(text, sender pid) of the next datagram, or (None, None)."""
    notify.settimeout(timeout)
    try:
        data, ancdata, _, _ = notify.recvmsg(4096, socket.CMSG_SPACE(12))
    except socket.timeout:
        return None, None
    pid = None
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
            pid = struct.unpack("iII", payload[:12])[0]
    return data.decode(), pid


def accepts(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


log_path = os.path.join(d, "server.log")
log = open(log_path, "w")
started = time.time()
proc = subprocess.Popen([sluice, "--config", config], stdout=log, stderr=subprocess.STDOUT,
                        env=dict(os.environ, NOTIFY_SOCKET=notify_path))
atexit.register(lambda: proc.poll() is None and proc.kill())

# 1. READY=1 once the ports accept.
text, pid = receive(30)
if text is None:
    fail("no notification within 30 s; log:\n" + open(log_path).read())
print(f"received after {time.time() - started:.2f} s from pid {pid}: {text!r}")
rtmp_ok, http_ok = accepts(rtmp_port), accepts(http_port)
check("READY=1" in text.split("\n"), "the first notification is READY=1")
check(pid == proc.pid, "it comes from the server's process (systemd's NotifyAccess=main)")
check(rtmp_ok and http_ok, "the RTMP and HTTP ports accept a connection at once when READY=1 arrives")
status = [line for line in text.split("\n") if line.startswith("STATUS=")]
check(len(status) == 1 and f"127.0.0.1:{rtmp_port}" in status[0] and f"http 127.0.0.1:{http_port}" in status[0],
      f"STATUS= names the RTMP and HTTP addresses ({status})")

# 2. SIGTERM during a drain: STOPPING=1 at its start, while the player holds the process.
player = RtmpClient(rtmp_port)
player.connect("live")
player.create_stream()
player.play("cam")
player.read_for(0.5)
proc.send_signal(signal.SIGTERM)
signalled = time.time()
text, pid = receive(10)
alive = proc.poll() is None
print(f"received {time.time() - signalled:.2f} s after SIGTERM: {text!r}")
check(text is not None and "STOPPING=1" in text.split("\n"), "SIGTERM brings STOPPING=1")
check("STATUS=Draining after SIGTERM" in text, "STATUS= says the server drains")
check(alive, "STOPPING=1 comes at the drain's start, while the process still runs")
try:
    proc.wait(timeout=15)
except subprocess.TimeoutExpired:
    fail("the server did not exit within 15 s of SIGTERM")
player.close()
check(proc.returncode == 0, f"the server exits 0 after the drain ({time.time() - signalled:.1f} s after SIGTERM)")
extra, _ = receive(0.2)
check(extra is None, f"nothing more after STOPPING=1 ({extra!r})")
log.close()

# 3. NOTIFY_SOCKET set, nobody there: no notification arrives, the server serves regardless.
server = Server("notify-nobody", env={"NOTIFY_SOCKET": os.path.join(d, "nobody.sock")}).start()
check(accepts(server.port), "with a NOTIFY_SOCKET nobody listens on, the server serves")
check(server.stop() == 0, "... and stops with status 0 on SIGTERM")
print("PASS")
