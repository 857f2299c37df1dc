#!/usr/bin/python3
"""RTMPS (docs/tls.md): with `rtmps: { listen, cert, key }` and a certificate the test makes with
openssl, ffmpeg publishes over TLS and players over TLS (ffmpeg, GStreamer) and plain RTMP get
the published packets unchanged; a client that verifies accepts the certificate for its name and
refuses it for another; a plain RTMP client on the TLS port, TLS garbage and a TLS handshake that
never finishes are closed with a log line while the server goes on serving."""
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg", "openssl", "gst-launch-1.0", "rtmpdump")

tmp = workdir("rtmps")
cert, key = make_cert(tmp)
tport, hport = free_port(), free_port()
server = Server("rtmps", extra_yaml=f"  handshake_timeout: 2s\nhttp: {{ listen: 127.0.0.1:{hport} }}\nrtmps: {{ listen: 127.0.0.1:{tport}, cert: {cert}, key: {key} }}\n"
                                    f"workers: 2\n").start()
# rtmp.handshake_timeout (2 s here) also bounds a TLS handshake that never finishes.
check(wait_port(tport), "the RTMPS listener accepts")
src = make_media(os.path.join(server.dir, "src.flv"), seconds=8)
turl = f"rtmps://127.0.0.1:{tport}/live/cam"


def ffmpeg_play(url, out, seconds, extra=()):
    return subprocess.Popen(["ffmpeg", "-nostdin", "-loglevel", "error"] + list(extra) +
                            ["-i", url, "-t", str(seconds), "-c", "copy", "-f", "flv", "-y", out],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


try:
    pub = publish_ffmpeg(src, turl, loop=True)  # players below join up to 10 s in
    time.sleep(1.5)
    tls_out, plain_out, gst_out = (os.path.join(tmp, n) for n in ("tls.flv", "plain.flv", "gst.flv"))
    players = [ffmpeg_play(turl, tls_out, 5), ffmpeg_play(server.url("live/cam"), plain_out, 5)]
    gst = subprocess.Popen(["timeout", "8", "gst-launch-1.0", "-q", "rtmp2src", f"location={turl}",
                            "tls-validation-flags=0", "!", "filesink",
                            f"location={gst_out}"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(1)
    clients = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{hport}/api/v1/clients", timeout=5).read())
    tls_workers = {c["worker"] for c in clients if c["protocol"] == "rtmps"}
    check(tls_workers == {0, 1}, f"RTMPS connections are spread over both loops like RTMP ones ({clients})")
    for pl in players:
        pl.wait(timeout=30)
    gst.wait(timeout=30)
    source_tags = flv_tags(src)
    check_same_packets("ffmpeg over RTMPS", tls_out, source_tags, min_video=100, min_audio=100)
    check_same_packets("ffmpeg over plain RTMP, published over RTMPS", plain_out, source_tags, min_video=100,
                       min_audio=100)
    check_same_packets("GStreamer rtmp2src over RTMPS", gst_out, source_tags, min_video=50, min_audio=50)

    # rtmpdump (librtmp on GnuTLS) plays over TLS: it needs a server that sends no TLS 1.3 session
    # ticket after the handshake.
    dump_out = os.path.join(tmp, "rtmpdump.flv")
    subprocess.run(["timeout", "6", "rtmpdump", "-q", "-v", "-r", turl, "-o", dump_out], capture_output=True)
    check_same_packets("rtmpdump over RTMPS", dump_out, source_tags, min_video=50, min_audio=50)
    stop_proc(pub)
    # Over TLS 1.3 the records these players read were sealed by Sluice, not OpenSSL (docs/tls.md,
    # "Records"): the close lines say so.
    time.sleep(0.5)
    tls_players = [l for l in server.log_text().splitlines()
                   if "event=close" in l and "tls=TLSv1.3/" in l and int(re.search(r"bytes_out=(\d+)", l).group(1)) > 200000]
    check(len(tls_players) >= 3 and all(l.rstrip().endswith("/sluice") for l in tls_players),
          f"the TLS 1.3 players' records were made by Sluice ({[l.split('tls=')[-1] for l in tls_players]})")

    # GStreamer publishes over TLS; a plain RTMP player gets its packets.
    gst_pub = subprocess.Popen(["gst-launch-1.0", "-q", "filesrc", f"location={src}", "!", "flvdemux", "name=d",
                                "d.video", "!", "queue", "!", "h264parse", "!", "flvmux", "name=m", "streamable=true",
                                "!", "rtmp2sink", f"location=rtmps://127.0.0.1:{tport}/live/gst", "tls-validation-flags=0",
                                "d.audio", "!", "queue", "!", "aacparse", "!", "m."],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(2)
    gst_got = os.path.join(tmp, "gst_published.flv")
    pl = ffmpeg_play(server.url("live/gst"), gst_got, 2)
    pl.wait(timeout=20)
    stop_proc(gst_pub)
    got = media_runs(flv_tags(gst_got))
    src_runs = media_runs(source_tags)
    check(len(got[9]) >= 20 and contiguous_in(got[9][:-2], src_runs[9]) >= 0,
          f"GStreamer rtmp2sink publishes over RTMPS: the player gets its video ({len(got[9])} packets)")
    pub = publish_ffmpeg(src, turl, loop=True)
    time.sleep(1.5)

    # A client that verifies: the right name passes, another name is refused.
    good = os.path.join(tmp, "verified.flv")
    v = ffmpeg_play(f"rtmps://localhost:{tport}/live/cam", good, 1, ("-tls_verify", "1", "-ca_file", cert))
    v.wait(timeout=20)
    check(v.returncode == 0 and len(flv_tags(good)) > 10, "ffmpeg verifying the certificate for localhost plays")
    bad = ffmpeg_play(turl, os.path.join(tmp, "refused.flv"), 1, ("-tls_verify", "1", "-ca_file", cert))
    bad.wait(timeout=20)
    check(bad.returncode != 0, "and refuses it for 127.0.0.1, a name the certificate does not have")
    stop_proc(pub)

    # Not TLS on the TLS port: a plain RTMP handshake, then garbage.
    for name, data in (("a plain RTMP C0+C1", b"\x03" + bytes(1536)), ("garbage", os.urandom(3000))):
        s = socket.create_connection(("127.0.0.1", tport), timeout=5)
        s.sendall(data)
        try:
            closed = s.recv(4096) is not None
            while s.recv(4096):
                pass
        except (ConnectionResetError, socket.timeout):
            closed = True
        s.close()
        check(closed, f"{name} on the TLS port is closed")
    time.sleep(0.5)
    check(server.log_text().count('reason="TLS:') >= 2, "with a log line saying why (TLS: ...)")
    # A TLS handshake that never finishes: half a ClientHello, then silence.
    s = socket.create_connection(("127.0.0.1", tport), timeout=10)
    s.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
    t0 = time.time()
    try:
        while s.recv(4096):
            pass
    except (ConnectionResetError, socket.timeout):
        pass
    waited = time.time() - t0
    s.close()
    check(1.5 <= waited <= 5, f"a TLS handshake that never finishes is closed by handshake_timeout ({waited:.1f} s)")
    check(server.alive(), "the server goes on")
    after = os.path.join(tmp, "after.flv")
    pub = publish_ffmpeg(src, turl)
    time.sleep(1.5)
    pl = ffmpeg_play(turl, after, 2)
    pl.wait(timeout=20)
    check(len(flv_tags(after)) > 20, "and still serves RTMPS after them")
    stop_proc(pub)
finally:
    rc = server.stop()
check(rc == 0, "server exits 0")
print("PASS")
