#!/usr/bin/python3
"""WebRTC against hostile peers (docs/webrtc.md): each costs one session or one datagram, with a
log line, never the process, and memory stays bounded.
  - 300 WHEP offers whose ICE never completes (the limit is 300 sessions): the 301st is refused
    (503), and after session_timeout (5 s) every one is gone (log: "ICE and DTLS did not
    complete"), so offers are answered again: webrtc.max_sessions and the timeout bound them;
  - garbage on the UDP port from unknown addresses (random bytes, DTLS-looking records, RTP
    headers, truncated and bad-integrity STUN): no answer, the server stays up;
  - a session whose peer passed ICE and then sends DTLS garbage and RTP before any handshake:
    those datagrams are dropped (DTLS starts over until a real ClientHello), and the session
    ends at its timeout like the others;
  - after all that, a new offer is answered and its STUN check succeeds."""
import http.client
import os
import random
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from srt_tools import free_udp_port  # noqa: E402
from webrtc_tools import stun_request  # noqa: E402

CORPUS = os.path.join(os.environ.get("SLUICE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "../..")),
                      "tests/fuzz/corpus/sdp")
OFFER = open(os.path.join(CORPUS, "chromium_whep"), "rb").read()
t_start = time.time()
hport, uport = free_port(), free_udp_port()
server = Server("webrtc-hostile", extra_yaml=f"http:\n  listen: 127.0.0.1:{hport}\n"
                                             f"webrtc:\n  listen: 127.0.0.1:{uport}\n  session_timeout: 5s\n"
                                             "  max_sessions: 300\nworkers: 1\n").start()
check(wait_port(hport), "the HTTP listener is up")


def offer():
    c = http.client.HTTPConnection("127.0.0.1", hport, timeout=10)
    c.request("POST", "/live/cam/whep", body=OFFER, headers={"Content-Type": "application/sdp"})
    r = c.getresponse()
    body = r.read().decode()
    c.close()
    return r.status, body


def creds(answer):
    get = lambda name: next(line.split(":", 1)[1] for line in answer.splitlines() if line.startswith("a=" + name + ":"))  # noqa: E731
    return get("ice-ufrag"), get("ice-pwd")


def stun(username, password):
    return stun_request(username, password)[1]


rss0 = server.rss_kb()
statuses = [offer()[0] for _ in range(301)]
check(statuses[:300] == [201] * 300 and statuses[300] == 503,
      f"300 sessions that never complete ICE are held, the 301st is refused: {statuses.count(201)} x 201, "
      f"last {statuses[-1]}")
rss1 = server.rss_kb()
# (RSS under ASan says little: its quarantine keeps what the 301 requests freed.)
print(f"INFO RSS {rss0} KB before, {rss1} KB with 300 sessions (ASan build)", flush=True)

sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.bind(("127.0.0.1", 0))
sock.settimeout(0.3)
rng = random.Random(7)
garbage = [bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 1400))) for _ in range(200)]
garbage += [bytes([22, 0xFE, 0xFD]) + os.urandom(rng.randrange(0, 300)) for _ in range(50)]  # DTLS-looking
garbage += [bytes([0x80, 96]) + os.urandom(rng.randrange(0, 1200)) for _ in range(50)]  # RTP-looking
garbage += [stun("nosuch:x", "password-password-pw")[:n] for n in (0, 4, 19, 20, 21, 40)]
garbage += [stun("nosuch:x", "password-password-pw")]
for g in garbage:
    sock.sendto(g, ("127.0.0.1", uport))
answered = 0
try:
    while True:
        sock.recvfrom(2048)
        answered += 1
except socket.timeout:
    pass
check(answered == 0, f"{len(garbage)} garbage datagrams from an unknown address: no answer ({answered})")
check(server.alive(), "the server is still running after the garbage")

check(wait_for(lambda: server.log_text().count("ICE and DTLS did not complete") >= 300, 12),
      "after session_timeout every unfinished session is closed (log: ICE and DTLS did not complete)")
status, answer = offer()
check(status == 201, f"offers are answered again ({status})")
ufrag, pwd = creds(answer)
remote_ufrag = next(line.split(":", 1)[1] for line in OFFER.decode().splitlines() if line.startswith("a=ice-ufrag:"))
sock.sendto(stun(f"{ufrag}:{remote_ufrag}", pwd), ("127.0.0.1", uport))
resp, _ = sock.recvfrom(2048)
check(struct.unpack(">H", resp[:2])[0] == 0x0101,
      f"a new session's STUN check succeeds ({resp[:2].hex()} {resp[20:60].hex()})")
for _ in range(5):
    sock.sendto(bytes([0x80, 96]) + os.urandom(100), ("127.0.0.1", uport))  # RTP before DTLS: ignored
sock.sendto(bytes([22, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10]) + os.urandom(40), ("127.0.0.1", uport))
for _ in range(3):
    sock.sendto(bytes([23, 0xFE, 0xFD]) + os.urandom(60), ("127.0.0.1", uport))
check(wait_for(lambda: server.log_text().count("ICE and DTLS did not complete") >= 301, 8),
      "DTLS garbage before a ClientHello costs only those datagrams: the session waits for a real "
      "handshake and ends at its timeout like the others")
check(server.alive(), "the server is still running")
server.stop()
print(f"INFO took {time.time() - t_start:.1f} s")
print("PASS")
