#!/usr/bin/python3
"""Writes the seeds of the WebRTC signalling fuzz targets:

tests/fuzz/corpus/stun/: STUN Binding requests as Chromium sends them to an ICE-lite answerer
(USERNAME, GOOG-NETWORK-INFO 0xC057, ICE-CONTROLLING, USE-CANDIDATE, PRIORITY, MESSAGE-INTEGRITY,
FINGERPRINT), over IPv4 and IPv6, with and without USE-CANDIDATE, a keepalive indication, RFC 5769's
sample request and responses, and an error response; built here with the password
tests/fuzz/stun_fuzz.cpp checks against. With Chromium (and playwright-core in a build's
web/node_modules), the checks Chromium really sent to a UDP socket on 127.0.0.1, which this script
answers, are kept too, as chromium_check_*; their MESSAGE-INTEGRITY is keyed with the same password.

tests/fuzz/corpus/sdp/: SDP offers. chromium_whip and chromium_whep are Chromium's createOffer() for a
sendonly video + audio publisher (the fake camera and microphone) and a recvonly player, rewritten
only when Chromium is found (the files are kept otherwise); the others are written by hand in the
forms Firefox, OBS (libdatachannel) and GStreamer's webrtcbin send (no Firefox here, and
webrtcbin needs python3-gst-1.0's GObject introspection, which this machine lacks).

  tests/fuzz/webrtc_seeds.py [NODE_MODULES]    (default: build/*/web/node_modules)
"""
import glob
import hashlib
import hmac
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import threading
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
STUN_OUT = os.path.join(HERE, "corpus", "stun")
SDP_OUT = os.path.join(HERE, "corpus", "sdp")
PASSWORD = b"fuzz-ice-password-0123456789"  # kPassword in tests/fuzz/stun_fuzz.cpp
UFRAG = "fzsv"
COOKIE = 0x2112A442


def attr(kind, value):
    pad = (-len(value)) % 4
    return struct.pack("!HH", kind, len(value)) + value + b"\0" * pad


def message(msg_type, tid, attrs, key=None, fingerprint=True):
    body = b"".join(attrs)
    if key is not None:
        # MESSAGE-INTEGRITY: the length field counts up to it, not the FINGERPRINT after it.
        head = struct.pack("!HHI", msg_type, len(body) + 24, COOKIE) + tid
        body += attr(0x0008, hmac.new(key, head + body, hashlib.sha1).digest())
    if fingerprint:
        head = struct.pack("!HHI", msg_type, len(body) + 8, COOKIE) + tid
        crc = (zlib.crc32(head + body) ^ 0x5354554E) & 0xFFFFFFFF
        body += attr(0x8028, struct.pack("!I", crc))
    return struct.pack("!HHI", msg_type, len(body), COOKIE) + tid + body


def xor_address(tid, ip, port):
    family = 2 if ":" in ip else 1
    raw = socket.inet_pton(socket.AF_INET6 if family == 2 else socket.AF_INET, ip)
    mask = struct.pack("!I", COOKIE) + tid
    return struct.pack("!BBH", 0, family, port ^ (COOKIE >> 16)) + bytes(a ^ b for a, b in zip(raw, mask))


def chromium_like(tid, username, use_candidate, controlling=0x5A17C0DE5A17C0DE):
    attrs = [attr(0x0006, username.encode()), attr(0xC057, struct.pack("!HH", 1, 10)),
             attr(0x802A, struct.pack("!Q", controlling))]
    if use_candidate:
        attrs.append(attr(0x0025, b""))
    attrs.append(attr(0x0024, struct.pack("!I", 0x6E7F1EFF)))
    return message(0x0001, tid, attrs, PASSWORD)


RFC5769_REQUEST = bytes.fromhex(
    "000100582112a442b7e7a701bc34d686fa87dfae802200105354554e207465737420636c69656e74"
    "002400046e0001ff80290008932ff9b151263b36000600096576746a3a6836765920202000080014"
    "9aeaa70cbfd8cb56781ef2b5b2d3f249c1b571a280280004e57a3bcf")
RFC5769_IPV4 = bytes.fromhex(
    "0101003c2112a442b7e7a701bc34d686fa87dfae8022000b7465737420766563746f722000200008"
    "0001a147e112a643000800142b91f599fd9e90c38c7489f92af9ba53f06be7d780280004c07d4c96")
RFC5769_IPV6 = bytes.fromhex(
    "010100482112a442b7e7a701bc34d686fa87dfae8022000b7465737420766563746f722000200014"
    "0002a1470113a9faa5d3f179bc25f4b5bed2b9d900080014a382954e4be67bf11784c97c8292c275"
    "bfe3ed4180280004c8fb0b4c")


def write(folder, name, data):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def stun_seeds():
    tid = bytes(range(1, 13))
    write(STUN_OUT, "chromium_like_check", chromium_like(tid, f"{UFRAG}:Cl1e", False))
    write(STUN_OUT, "chromium_like_nomination", chromium_like(bytes(range(2, 14)), f"{UFRAG}:Cl1e", True))
    write(STUN_OUT, "wrong_password", message(0x0001, tid, [attr(0x0006, f"{UFRAG}:Cl1e".encode())], b"not it"))
    write(STUN_OUT, "ice_controlled", message(0x0001, tid, [attr(0x0006, f"{UFRAG}:Cl1e".encode()),
                                                            attr(0x8029, struct.pack("!Q", 7))], PASSWORD))
    write(STUN_OUT, "unknown_required", message(0x0001, tid, [attr(0x0006, f"{UFRAG}:Cl1e".encode()),
                                                              attr(0x0777, b"\1\2\3")], PASSWORD))
    write(STUN_OUT, "keepalive_indication", message(0x0011, tid, []))
    write(STUN_OUT, "success_ipv4", message(0x0101, tid, [attr(0x0020, xor_address(tid, "192.0.2.1", 32853))],
                                            PASSWORD))
    write(STUN_OUT, "success_ipv6", message(0x0101, bytes(range(3, 15)),
                                            [attr(0x0020, xor_address(bytes(range(3, 15)), "2001:db8::7", 443))],
                                            PASSWORD))
    write(STUN_OUT, "error_401", message(0x0111, tid, [attr(0x0009, b"\0\0\4\1Unauthorized")]))
    write(STUN_OUT, "rfc5769_request", RFC5769_REQUEST)
    write(STUN_OUT, "rfc5769_ipv4_response", RFC5769_IPV4)
    write(STUN_OUT, "rfc5769_ipv6_response", RFC5769_IPV6)


def find_node_modules():
    if len(sys.argv) > 1:
        return os.path.abspath(sys.argv[1])
    for path in sorted(glob.glob(os.path.join(HERE, "..", "..", "build", "*", "web", "node_modules"))):
        if os.path.isfile(os.path.join(path, "playwright-core", "package.json")):
            return os.path.abspath(path)
    return None


def answer_checks(sock, got, stop):
    """Answers Chromium's checks as an ICE-lite server would, so that it goes on to nominate."""
    sock.settimeout(0.2)
    while not stop.is_set():
        try:
            data, peer = sock.recvfrom(2048)
        except socket.timeout:
            continue
        if len(data) < 20 or data[0] > 3:
            continue  # DTLS after nomination: not ours to keep
        got.append(data)
        tid = data[8:20]
        if struct.unpack("!H", data[:2])[0] == 0x0001:
            sock.sendto(message(0x0101, tid, [attr(0x0020, xor_address(tid, peer[0], peer[1]))], PASSWORD), peer)


def chromium_seeds():
    node_modules, chromium = find_node_modules(), shutil.which("chromium")
    if not node_modules or not chromium or not shutil.which("node"):
        print("no Chromium, node or playwright-core: the stored Chromium seeds stay as they are")
        return
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    got, stop = [], threading.Event()
    thread = threading.Thread(target=answer_checks, args=(sock, got, stop))
    thread.start()
    try:
        out = subprocess.run(["node", os.path.join(HERE, "webrtc_seeds_browser.js"), node_modules, chromium,
                              str(sock.getsockname()[1]), UFRAG, PASSWORD.decode()],
                             capture_output=True, text=True, timeout=90)
    finally:
        stop.set()
        thread.join()
        sock.close()
    if not out.stdout.strip():
        raise SystemExit(f"the browser script printed nothing (rc {out.returncode}): {out.stderr[-2000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if "fatal" in result:
        raise SystemExit("the browser script failed: " + result["fatal"])
    write(SDP_OUT, "chromium_whip", result["whip"].encode())
    write(SDP_OUT, "chromium_whep", result["whep"].encode())
    print(f"Chromium: ICE states {result.get('iceStates')}, {len(got)} STUN datagrams")
    for old in glob.glob(os.path.join(STUN_OUT, "chromium_check_*")):
        os.remove(old)
    # One seed per kind of check: the first plain one and the first nomination are enough.
    kept = {}
    for data in got:
        nominated = b"\x00\x25\x00\x00" in data
        kept.setdefault("nomination" if nominated else "check", data)
    for kind, data in kept.items():
        write(STUN_OUT, f"chromium_check_{kind}", data)


# Offers in the forms other clients send, written from what their sources and captures show
# (docs/webrtc-protocol.md, "What the clients offer"); CRLF line ends as on the wire.
FIREFOX_WHIP = """v=0
o=mozilla...THIS_IS_SDPARTA-99.0 7186452373567010925 0 IN IP4 0.0.0.0
s=-
t=0 0
a=sendrecv
a=fingerprint:sha-256 3A:9B:4C:2E:71:0D:5F:A8:E1:6C:93:77:BB:04:1D:8E:52:C0:3F:69:A4:17:DE:88:0B:F2:65:C9:3D:7A:E0:14
a=group:BUNDLE 0 1
a=ice-options:trickle
a=msid-semantic:WMS *
m=audio 9 UDP/TLS/RTP/SAVPF 109 9 0 8 101
c=IN IP4 0.0.0.0
a=sendonly
a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level
a=extmap:2/recvonly urn:ietf:params:rtp-hdrext:csrc-audio-level
a=extmap:3 urn:ietf:params:rtp-hdrext:sdes:mid
a=fmtp:109 maxplaybackrate=48000;stereo=1;useinbandfec=1
a=fmtp:101 0-15
a=ice-pwd:6f1c58b2e0e1d7a4a3cbd2f0e1a2b3c4
a=ice-ufrag:8a2f4c1d
a=mid:0
a=msid:{5b3d2e61-8c1a-4c7f-9e2b-1f0a6d3c4b5a} {a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d}
a=rtcp-mux
a=rtpmap:109 opus/48000/2
a=rtpmap:9 G722/8000/1
a=rtpmap:0 PCMU/8000
a=rtpmap:8 PCMA/8000
a=rtpmap:101 telephone-event/8000
a=setup:actpass
a=ssrc:2877434920 cname:{0c2c5f7e-3c4d-4e8a-9b1f-2d3e4f5a6b7c}
m=video 9 UDP/TLS/RTP/SAVPF 120 124 121 125 126 127 97 98
c=IN IP4 0.0.0.0
a=sendonly
a=extmap:3 urn:ietf:params:rtp-hdrext:sdes:mid
a=extmap:4 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time
a=extmap:5 urn:ietf:params:rtp-hdrext:toffset
a=extmap:6/recvonly http://www.webrtc.org/experiments/rtp-hdrext/playout-delay
a=extmap:7 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01
a=fmtp:126 profile-level-id=42e01f;level-asymmetry-allowed=1;packetization-mode=1
a=fmtp:97 profile-level-id=42e01f;level-asymmetry-allowed=1
a=fmtp:120 max-fs=12288;max-fr=60
a=fmtp:124 apt=120
a=fmtp:121 max-fs=12288;max-fr=60
a=fmtp:125 apt=121
a=fmtp:127 apt=126
a=fmtp:98 apt=97
a=ice-pwd:6f1c58b2e0e1d7a4a3cbd2f0e1a2b3c4
a=ice-ufrag:8a2f4c1d
a=mid:1
a=msid:{5b3d2e61-8c1a-4c7f-9e2b-1f0a6d3c4b5a} {f0e1d2c3-b4a5-4687-9a8b-7c6d5e4f3a2b}
a=rtcp-fb:120 nack
a=rtcp-fb:120 nack pli
a=rtcp-fb:120 ccm fir
a=rtcp-fb:120 goog-remb
a=rtcp-fb:120 transport-cc
a=rtcp-fb:126 nack
a=rtcp-fb:126 nack pli
a=rtcp-fb:126 ccm fir
a=rtcp-fb:126 goog-remb
a=rtcp-fb:126 transport-cc
a=rtcp-fb:97 nack
a=rtcp-fb:97 nack pli
a=rtcp-fb:97 ccm fir
a=rtcp-fb:97 goog-remb
a=rtcp-fb:97 transport-cc
a=rtcp-mux
a=rtcp-rsize
a=rtpmap:120 VP8/90000
a=rtpmap:124 rtx/90000
a=rtpmap:121 VP9/90000
a=rtpmap:125 rtx/90000
a=rtpmap:126 H264/90000
a=rtpmap:127 rtx/90000
a=rtpmap:97 H264/90000
a=rtpmap:98 rtx/90000
a=setup:actpass
a=ssrc:1803224434 cname:{0c2c5f7e-3c4d-4e8a-9b1f-2d3e4f5a6b7c}
a=ssrc:3311722610 cname:{0c2c5f7e-3c4d-4e8a-9b1f-2d3e4f5a6b7c}
a=ssrc-group:FID 1803224434 3311722610
"""

# OBS 30's WHIP output (libdatachannel): one BUNDLE, session-level ICE credentials, both media
# sendonly with one payload type each, no rtx, host candidates in the offer.
OBS_WHIP = """v=0
o=rtc 2895215384 0 IN IP4 127.0.0.1
s=-
t=0 0
a=group:BUNDLE 0 1
a=group:LS 0 1
a=msid-semantic:WMS *
a=setup:actpass
a=ice-ufrag:Xp2o
a=ice-pwd:5kX0a9p3DqLz2vYQm8wTnB
a=ice-options:ice2,trickle
a=fingerprint:sha-256 6E:0A:1B:93:C4:55:2F:D8:71:0E:A3:9C:44:B7:12:6D:F0:89:3A:5E:C2:17:DB:60:8F:24:AE:3B:95:D1:07:C6
m=audio 50312 UDP/TLS/RTP/SAVPF 111
c=IN IP4 192.168.1.20
a=mid:0
a=sendonly
a=ssrc:3815281372 cname:obs-cname
a=ssrc:3815281372 msid:obs-stream obs-audio
a=msid:obs-stream obs-audio
a=rtcp-mux
a=rtpmap:111 opus/48000/2
a=fmtp:111 minptime=10;maxaveragebitrate=96000;stereo=1;sprop-stereo=1;useinbandfec=1
a=candidate:1 1 UDP 2122317823 192.168.1.20 50312 typ host
a=candidate:2 1 UDP 1686109951 203.0.113.7 50312 typ srflx raddr 0.0.0.0 rport 0
m=video 50312 UDP/TLS/RTP/SAVPF 96
c=IN IP4 192.168.1.20
a=mid:1
a=sendonly
a=ssrc:3815281373 cname:obs-cname
a=ssrc:3815281373 msid:obs-stream obs-video
a=msid:obs-stream obs-video
a=rtcp-mux
a=rtpmap:96 H264/90000
a=rtcp-fb:96 nack
a=rtcp-fb:96 nack pli
a=rtcp-fb:96 goog-remb
a=fmtp:96 profile-level-id=42e01f;packetization-mode=1;level-asymmetry-allowed=1
"""

# GStreamer webrtcbin (1.22) with H.264 and Opus payloaders: sendrecv by default, media-level
# credentials, no candidates in the offer (they trickle).
GSTREAMER_WHIP = """v=0
o=- 3129870161925433349 0 IN IP4 0.0.0.0
s=-
t=0 0
a=ice-options:trickle
a=group:BUNDLE video0 audio1
m=video 9 UDP/TLS/RTP/SAVPF 96
c=IN IP4 0.0.0.0
a=setup:actpass
a=ice-ufrag:0cWX3n8GcjwQm3rrzuJh4JPw8aUwK9w5
a=ice-pwd:S1h5OqJWw4fcG0zUdWjLsN5pKQbyD4kB
a=rtcp-mux
a=rtcp-rsize
a=sendrecv
a=rtpmap:96 H264/90000
a=rtcp-fb:96 nack
a=rtcp-fb:96 nack pli
a=framerate:30
a=fmtp:96 packetization-mode=1;profile-level-id=42c01f;sprop-parameter-sets=Z0LAH9kAUAW7ARAAAAMAEAAAAwPI8YMkgA==,aMuDyyA=
a=ssrc:1419564520 msid:user1394556404@host-2a1fd0e4 webrtctransceiver0
a=ssrc:1419564520 cname:user1394556404@host-2a1fd0e4
a=mid:video0
a=fingerprint:sha-256 A1:B2:C3:D4:E5:F6:07:18:29:3A:4B:5C:6D:7E:8F:90:01:12:23:34:45:56:67:78:89:9A:AB:BC:CD:DE:EF:F0
m=audio 0 UDP/TLS/RTP/SAVPF 97
c=IN IP4 0.0.0.0
a=setup:actpass
a=ice-ufrag:0cWX3n8GcjwQm3rrzuJh4JPw8aUwK9w5
a=ice-pwd:S1h5OqJWw4fcG0zUdWjLsN5pKQbyD4kB
a=bundle-only
a=rtcp-mux
a=rtcp-rsize
a=sendrecv
a=rtpmap:97 OPUS/48000/2
a=rtcp-fb:97 nack
a=rtcp-fb:97 nack pli
a=fmtp:97 sprop-maxcapturerate=48000;sprop-stereo=0
a=ssrc:2391023449 msid:user1394556404@host-2a1fd0e4 webrtctransceiver1
a=ssrc:2391023449 cname:user1394556404@host-2a1fd0e4
a=mid:audio1
a=fingerprint:sha-256 A1:B2:C3:D4:E5:F6:07:18:29:3A:4B:5C:6D:7E:8F:90:01:12:23:34:45:56:67:78:89:9A:AB:BC:CD:DE:EF:F0
"""


def sdp_seeds():
    for name, text in (("firefox_whip", FIREFOX_WHIP), ("obs_whip", OBS_WHIP), ("gstreamer_whip", GSTREAMER_WHIP)):
        write(SDP_OUT, name, text.replace("\n", "\r\n").encode())


def main():
    stun_seeds()
    sdp_seeds()
    chromium_seeds()


if __name__ == "__main__":
    main()
