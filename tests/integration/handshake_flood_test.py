#!/usr/bin/python3
"""Handshakes are rationed per loop iteration (issue 39; docs/configuration.md,
rtmp.limits.accepts_per_iteration), like accepts. One worker loop; ffmpeg publishes and rtmpdump
plays (compared with the source byte for byte) while:
  A. 2000 connections are opened and left silent, then all send a C0C1 with a digest (the
     handshake OBS and FFmpeg send: three HMACs for the server, about 0.7 ms each under ASan) at
     once: without the bound one loop iteration would answer about a thousand of them (0.55 s);
  B. 5000 more connect and send a plain C0C1 each, as fast as they can (the issue's case).
The loop's lag (how late a 50 ms timer ran, sluice_loop_lag_seconds) stays at most 50 ms, the
deferred reads are counted (handshake_deferred), every connection is answered (S0S1S2: none
starved) and every one is closed at the handshake timeout (10 s, the default: the server answers
about 1500 digest handshakes a second here, and a loaded machine half that)."""
import hashlib
import hmac
import os
import re
import resource
import selectors
import socket
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg", "rtmpdump")
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 20000), hard))
http_port = free_port()
server = Server("handshake-flood", extra_yaml=(
    f"workers: 1\nhttp:\n  listen: 127.0.0.1:{http_port}\n"))
server.start()
check(wait_port(http_port), "the HTTP listener is up")
legit = LegitPair(server, seconds=50, play_s=40)

FP_KEY = b"Genuine Adobe Flash Player 001"


def c0c1(digest=True):
    """C0 and a C1 with the client digest (scheme 1: its offset from bytes 8-11), or a plain one."""
    c1 = bytearray(os.urandom(1536))
    if not digest:
        c1[0:8] = bytes(8)
        return b"\x03" + bytes(c1)
    c1[0:4] = bytes(4)
    c1[4:8] = bytes([0x80, 0x00, 0x07, 0x02])  # a Flash Player version: the complex handshake
    offset = (c1[8] + c1[9] + c1[10] + c1[11]) % 728 + 12
    digest = hmac.new(FP_KEY, bytes(c1[:offset]) + bytes(c1[offset + 32:]), hashlib.sha256).digest()
    c1[offset:offset + 32] = digest
    return b"\x03" + bytes(c1)


def metrics_text():
    return urllib.request.urlopen(f"http://127.0.0.1:{http_port}/metrics", timeout=10).read().decode()


def metric(text, name):
    m = re.search("^" + re.escape(name) + r" (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def answered_and_closed(socks, timeout):
    """Reads every socket until S0S1S2 (3073 bytes) came and then the server closed it.
    Returns (answered, closed)."""
    sel = selectors.DefaultSelector()
    got = {}
    for s in socks:
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
        got[s] = 0
    answered, closed = 0, 0
    deadline = time.time() + timeout
    while got and time.time() < deadline:
        for key, _ in sel.select(timeout=0.2):
            s = key.fileobj
            try:
                data = s.recv(65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            if data:
                before = got[s]
                got[s] += len(data)
                answered += before < 3073 <= got[s]
                if answered == len(socks) and before < 3073 <= got[s]:
                    lag_when_answered.append(metric(metrics_text(), 'sluice_loop_lag_seconds{quantile="1"}'))
                continue
            closed += 1
            sel.unregister(s)
            s.close()
            del got[s]
    for s in got:
        sel.unregister(s)
        s.close()
    return answered, closed


def connect_many(n, send):
    out = []
    for _ in range(n):
        s = socket.socket()
        s.connect(("127.0.0.1", server.port))
        if send:
            s.sendall(c0c1(digest=False))
        out.append(s)
    return out


lag_when_answered = []
LAG = 'sluice_loop_lag_seconds{quantile="1"}'
print(f"lag before: {metric(metrics_text(), LAG)}")
deferred0 = guard_events(http_port).get("handshake_deferred", 0)
# A. Silent connections, then every handshake at once.
silent = connect_many(2000, send=False)
time.sleep(1.0)  # all accepted (32 an iteration)
hellos = [c0c1() for _ in silent]
t0 = time.time()
for s, hello in zip(silent, hellos):
    s.sendall(hello)
print(f"A: 2000 C0C1 sent in {time.time() - t0:.2f} s")
answered, closed = answered_and_closed(silent, 25)
lag_a = metric(metrics_text(), 'sluice_loop_lag_seconds{quantile="1"}')
deferred_a = guard_events(http_port).get("handshake_deferred", 0) - deferred0
print(f"A: lag when all answered {lag_when_answered}")
print(f"A: answered {answered}, closed {closed}, loop lag max {lag_a * 1000:.1f} ms, deferred reads {deferred_a}")
check(answered == 2000, f"A: every connection got S0S1S2 ({answered} of 2000)")
check(closed == 2000, f"A: every connection was closed at the handshake timeout ({closed} of 2000)")
check(deferred_a > 0, f"A: handshake reads were put off to later iterations ({deferred_a})")

# B. 5000 connections, each connecting and sending at once, within about a second.
t0 = time.time()
flood = connect_many(5000, send=True)
print(f"B: 5000 connected and sent in {time.time() - t0:.2f} s")
answered, closed = answered_and_closed(flood, 30)
lag_b = metric(metrics_text(), 'sluice_loop_lag_seconds{quantile="1"}')
print(f"B: answered {answered}, closed {closed}, loop lag max {lag_b * 1000:.1f} ms")
check(answered == 5000, f"B: every connection got S0S1S2 ({answered} of 5000)")
check(closed == 5000, f"B: every connection was closed at the handshake timeout ({closed} of 5000)")
check(lag_b <= 0.050, f"the loop was never late by more than 50 ms, through A and B ({lag_b * 1000:.1f} ms)")

legit.finish(min_packets=300)
check(server.stop() == 0, "the server exits cleanly")
print("handshake_flood_test: OK")
