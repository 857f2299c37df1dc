#!/usr/bin/python3
"""WHIP and WHEP signalling and ICE-lite (docs/webrtc.md): the HTTP side and the UDP port, driven
with the offers real clients send (Chromium's WHEP and WHIP offers, OBS's and GStreamer's WHIP
offers from tests/fuzz/corpus/sdp/) and with STUN Binding requests built here the way a browser
builds them (USERNAME, PRIORITY, ICE-CONTROLLING, USE-CANDIDATE, MESSAGE-INTEGRITY, FINGERPRINT).

  - POST /live/cam/whep with Chromium's offer: 201 Created, Content-Type application/sdp, a
    Location /live/cam/whep/ID, CORS headers that expose it; the answer is ICE-lite with our
    credentials, a sha-256 fingerprint, a=setup:passive, one host candidate on the loop's UDP port
    (127.0.0.1), H.264 and Opus accepted, sendonly;
  - a Binding request with the answer's ufrag and pwd gets a success response from that port: the
    transaction id echoed, XOR-MAPPED-ADDRESS = the request's source, MESSAGE-INTEGRITY keyed with
    the answer's ice-pwd, FINGERPRINT right; one with a wrong password gets 401; one for an unknown
    ufrag no answer; the log says ice_connected;
  - WHIP with a publish key: no key 401, a wrong one 403, `Authorization: Bearer KEY` 201 (OBS's
    and GStreamer's offers too); the hooks' protocol is webrtc (log);
  - refusals: not SDP 415, garbage SDP 400 with the parser's line, a WHIP offer sent to WHEP 406;
    OPTIONS preflight allows POST, DELETE and Authorization;
  - two loops (workers: 2), each with its port: DELETE of the resource is 200 and ends the session
    whichever loop the DELETE reached (it is handed to the session's), after which it answers no
    STUN; an unknown resource 404; webrtc.max_sessions (all loops): the offer past it gets 503."""
import hashlib
import hmac
import http.client
import os
import socket
import struct
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from srt_tools import free_udp_port  # noqa: E402
from webrtc_tools import MAGIC, stun_request  # noqa: E402

CORPUS = os.path.join(os.environ.get("SLUICE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "../..")),
                      "tests/fuzz/corpus/sdp")
t_start = time.time()


hport, uport = free_port(), free_udp_port(2)  # two loops: two ports
apps = ("  live: { type: live, gop_cache: true }\n"
        "  studio: { type: live, publish: { keys: [k-secret] } }\n")
server = Server("webrtc-signalling", apps=apps,
                extra_yaml=f"http:\n  listen: 127.0.0.1:{hport}\n"
                           f"webrtc:\n  listen: 127.0.0.1:{uport}\n  max_sessions: 4\nworkers: 2\n").start()
check(wait_port(hport), "the HTTP listener is up")
check(wait_for(lambda: "event=webrtc_listening" in server.log_text(), 5), "the server logs event=webrtc_listening")


def offer_text(name):
    return open(os.path.join(CORPUS, name), "rb").read()


def request(method, path, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", hport, timeout=10)
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, data


def post(path, name, headers=None):
    h = {"Content-Type": "application/sdp"}
    h.update(headers or {})
    return request("POST", path, offer_text(name), h)


def attr(sdp, name):
    return [line.split(":", 1)[1] for line in sdp.splitlines() if line.startswith("a=" + name + ":")]


# ---- WHEP: the answer
status, headers, body = post("/live/cam/whep", "chromium_whep")
check(status == 201, f"WHEP offer: 201 Created (got {status}: {body[:200]!r})")
check(headers.get("content-type", "").startswith("application/sdp"), "the answer is application/sdp")
location = headers.get("location", "")
check(location.startswith("/live/cam/whep/") and len(location) > len("/live/cam/whep/"),
      f"Location names the session resource ({location!r})")
check("location" in headers.get("access-control-expose-headers", "").lower(), "CORS exposes Location to a browser")
answer = body.decode()
check("a=ice-lite" in answer.splitlines(), "the answer is ICE-lite")
ufrag, pwd = attr(answer, "ice-ufrag")[0], attr(answer, "ice-pwd")[0]
check(len(ufrag) >= 4 and len(pwd) >= 22, f"ICE credentials of the sizes RFC 8839 asks ({ufrag!r}, {len(pwd)} chars)")
fp = attr(answer, "fingerprint")
check(fp and fp[0].startswith("sha-256 ") and len(fp[0].split()[1]) == 95, f"a sha-256 fingerprint ({fp})")
check(attr(answer, "setup") and all(v == "passive" for v in attr(answer, "setup")), "a=setup:passive")
cands = attr(answer, "candidate")
# The session lives on the loop that took the HTTP request: loop i's port is the listen port + i.
session_port = int(cands[0].split()[5]) if cands else 0
check(cands and session_port in (uport, uport + 1) and all(f"127.0.0.1 {session_port} typ host" in c for c in cands),
      f"host candidates on 127.0.0.1, on a loop's port ({uport} or {uport + 1}): {cands}")
rtpmaps = attr(answer, "rtpmap")
check(any("H264/90000" in r for r in rtpmaps) and any("opus/48000/2" in r for r in rtpmaps),
      f"H.264 and Opus accepted: {rtpmaps}")
check("a=sendonly" in answer.splitlines(), "the server sends (sendonly) to a WHEP player")

# ---- ICE-lite: Binding requests
def stun_attrs(msg):
    out, off = {}, 20
    while off + 4 <= len(msg):
        t, n = struct.unpack(">HH", msg[off:off + 4])
        out.setdefault(t, (off, msg[off + 4:off + 4 + n]))
        off += 4 + n + (4 - n % 4) % 4
    return out


sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.bind(("127.0.0.1", 0))
sock.settimeout(2)
my_port = sock.getsockname()[1]


def ask(packet):
    sock.sendto(packet, ("127.0.0.1", session_port))
    try:
        data, src = sock.recvfrom(2048)
        return data, src
    except socket.timeout:
        return None, None


tid, req = stun_request(f"{ufrag}:rYlf", pwd)
resp, src = ask(req)
check(resp is not None and src == ("127.0.0.1", session_port), f"a Binding request is answered from the loop's port ({src})")
mtype, mlen, cookie = struct.unpack(">HHI", resp[:8])
check(mtype == 0x0101 and cookie == MAGIC and resp[8:20] == tid, f"a success response to our transaction ({mtype:#06x})")
a = stun_attrs(resp)
xport = struct.unpack(">H", a[0x0020][1][2:4])[0] ^ (MAGIC >> 16)
xaddr = socket.inet_ntoa(struct.pack(">I", struct.unpack(">I", a[0x0020][1][4:8])[0] ^ MAGIC))
check((xaddr, xport) == ("127.0.0.1", my_port), f"XOR-MAPPED-ADDRESS is our source ({xaddr}:{xport})")
mi_off, mi = a[0x0008]
head = resp[:2] + struct.pack(">H", mi_off + 24 - 20) + resp[4:20]
check(hmac.compare_digest(mi, hmac.new(pwd.encode(), head + resp[20:mi_off], hashlib.sha1).digest()),
      "MESSAGE-INTEGRITY is keyed with the answer's ice-pwd")
fp_off, fpv = a[0x8028]
check(struct.unpack(">I", fpv)[0] == (zlib.crc32(resp[:fp_off]) ^ 0x5354554E) & 0xFFFFFFFF, "FINGERPRINT is right")
check(wait_for(lambda: "event=ice_connected" in server.log_text(), 3), "the log says event=ice_connected")
_, bad = stun_request(f"{ufrag}:rYlf", "wrong-password-wrong-pass")
resp, _ = ask(bad)
check(resp is not None and struct.unpack(">H", resp[:2])[0] == 0x0111, "a wrong password gets an error response")
code = stun_attrs(resp).get(0x0009)
check(code and code[1][2] * 100 + code[1][3] == 401, "... 401")
_, unknown = stun_request("nosuchufrag:x", pwd)
check(ask(unknown)[0] is None, "a Binding request for an unknown ufrag gets no answer")

# ---- WHIP and keys
status, _, body = post("/studio/cam/whip", "chromium_whip")
check(status == 401, f"WHIP without a key: 401 ({status} {body[:100]!r})")
status, _, _ = post("/studio/cam/whip", "chromium_whip", {"Authorization": "Bearer k-wrong"})
check(status == 403, f"WHIP with a wrong key: 403 ({status})")
for name in ("chromium_whip", "obs_whip"):
    status, headers, body = post("/studio/cam/whip", name, {"Authorization": "Bearer k-secret"})
    check(status == 201 and "a=recvonly" in body.decode().splitlines(),
          f"{name}: WHIP with the Bearer key: 201 and a recvonly answer ({status} {body[:160]!r})")
    check(headers.get("location", "").startswith("/studio/cam/whip/"), f"{name}: Location under /studio/cam/whip/")
    request("DELETE", headers["location"])

# ---- refusals
status, _, body = request("POST", "/live/cam/whep", b"v=0\r\n", {"Content-Type": "text/plain"})
check(status == 415, f"an offer that is not application/sdp: 415 ({status})")
status, _, body = request("POST", "/live/cam/whep", b"v=0\r\nm=video\r\n", {"Content-Type": "application/sdp"})
check(status == 400 and b"line" in body, f"garbage SDP: 400 naming the line ({status} {body[:120]!r})")
status, _, body = post("/live/cam/whep", "chromium_whip")
check(status == 406, f"a sendonly (WHIP) offer sent to WHEP: 406 ({status} {body[:120]!r})")
status, headers, _ = request("OPTIONS", "/live/cam/whep")
check(status == 204 and "POST" in headers.get("access-control-allow-methods", "") and
      "authorization" in headers.get("access-control-allow-headers", "").lower(), f"OPTIONS preflight ({headers})")

# ---- DELETE (two loops: the DELETE may reach the other loop, which hands it to the session's)
sid = location.rsplit("/", 1)[1]
status, _, _ = request("DELETE", location)
check(status == 200, f"DELETE of the session: 200 ({status})")
check(wait_for(lambda: f"webrtc={sid} event=webrtc_close" in server.log_text(), 3),
      "the session closes (event=webrtc_close), whichever loop the DELETE reached")
check(ask(stun_request(f"{ufrag}:rYlf", pwd)[1])[0] is None, "the ended session answers no STUN")
status, _, _ = request("DELETE", "/live/cam/whep/nosuchsession")
check(status == 404, f"DELETE of an unknown session: 404 ({status})")
made = [post("/live/cam/whep", "chromium_whep") for _ in range(5)]
check([m[0] for m in made] == [201, 201, 201, 201, 503], f"webrtc.max_sessions 4: the fifth gets 503 ({[m[0] for m in made]})")
check(server.alive(), "the server is still running")
server.stop()
print(f"INFO took {time.time() - t_start:.1f} s")
print("PASS")
