#!/usr/bin/python3
"""Issue 11's RTMP holes, tried as an attacker would while a legitimate publisher and player run
(the player's capture must stay byte-exact throughout):

1. cheap commands, never read: the server stops reading above the output bound, memory stays
   flat, and the connection is closed after rtmp.limits.output_timeout;
2. play on ids createStream never returned: refused (Play.Failed), one player only;
3. waiting players: at most streams_per_connection per connection, at most limits.max_streams in
   the server, each refusal told to the client and counted;
4. partial messages: small before connect and for a connection that has not published (a
   player), a publisher's bound from its first frames (2 MiB at first), one server-wide budget
   over all of them;
5. stream names that could become paths or log lines are refused with a reason.
Counters are read from /metrics."""
import os
import re
import select
import socket
import struct
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from rtmp_client import RtmpClient  # noqa: E402

require_tools("ffmpeg", "ffprobe")
http_port = free_port()
server = Server("rtmp-hostile", extra_yaml=(
    "  limits:\n"
    "    output_timeout: 3s\n"
    "    max_streams: 60\n"
    "    reassembly_budget: 4MiB\n"),
    apps="  live: { type: live, gop_cache: true }\n",
    # ASan keeps freed memory in a quarantine (256 MiB by default): RSS would measure churn, not
    # what the server holds.
    env={"ASAN_OPTIONS": (os.environ.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=4").lstrip(":")})
with open(server.config, "a") as f:
    # One worker: every connection shares one registry (section 6 needs player and publisher together).
    f.write(f"workers: 1\nhttp:\n  listen: 127.0.0.1:{http_port}\n")
server.start()
wait_port(http_port)
d = server.dir
src = make_media(os.path.join(d, "src.flv"), seconds=20)
source_tags = flv_tags(src)
url = server.url("live/cam")


def metrics():
    text = urllib.request.urlopen(f"http://127.0.0.1:{http_port}/metrics", timeout=5).read().decode()
    out = {}
    for line in text.splitlines():
        m = re.match(r'sluice_guard_events_total\{event="(\w+)"\} (\S+)', line)
        if m:
            out[m.group(1)] = float(m.group(2))
        m = re.match(r"sluice_streams (\S+)", line)
        if m:
            out["streams"] = float(m.group(1))
    return out


def connected(app="live"):
    c = RtmpClient(server.port)
    c.connect(app)
    check(c.wait_for(lambda m: m.command() and m.command()[0] == "_result", 5) is not None, "connect answered")
    return c


pub = publish_ffmpeg(src, url)
rec_path = os.path.join(d, "legit.flv")
try:
    time.sleep(2)
    rec = subprocess.Popen(["timeout", "-k", "2", "30", "ffmpeg", "-nostdin", "-loglevel", "error", "-i", url,
                            "-c", "copy", "-t", "14", "-f", "flv", rec_path],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(1)

    # 1. A reply flood that never reads.
    rss0 = server.rss_kb()
    flood = connected()
    flood.create_stream()
    one = flood.command_bytes("seek", (None, 1000.0), sid=1, txn=0, csid=8)
    block = one * 2000
    flood.sock.settimeout(2.0)
    sent = 0
    t0 = time.time()
    try:
        while sent < 64 << 20 and time.time() - t0 < 15:
            flood.sock.sendall(block)
            sent += len(block)
    except socket.timeout:
        pass
    grown_mib = (server.rss_kb() - rss0) / 1024
    print(f"reply flood: sent {sent >> 20} MiB before the server stopped reading; RSS +{grown_mib:.1f} MiB")
    check(sent < 48 << 20, f"the server stopped reading the flood ({sent >> 20} MiB sent)")
    check(grown_mib < 40, f"server memory stayed bounded (+{grown_mib:.1f} MiB)")
    # Reading would drain it: watch for the peer's FIN (POLLRDHUP) with the replies still unread.
    poller = select.poll()
    poller.register(flood.sock, select.POLLRDHUP)
    hup = poller.poll(8000)
    check(bool(hup) and "event=output_overflow" in server.log_text(),
          "the flood connection is closed after output_timeout, with a log line")
    flood.close()

    # 2. play on ids nobody created.
    c = connected()
    c.create_stream()
    for sid in range(1, 301):
        c.play("cam", sid=sid)
    c.read_for(3)
    statuses = c.statuses()
    check(statuses.count("NetStream.Play.Start") == 1, f"one play started ({statuses.count('NetStream.Play.Start')})")
    check(statuses.count("NetStream.Play.Failed") == 299, f"299 plays refused ({statuses.count('NetStream.Play.Failed')})")
    media_ids = {m.stream_id for m in c.messages if m.type in (8, 9)}
    check(media_ids == {1}, f"media only on stream id 1 ({sorted(media_ids)[:5]})")
    media_bytes = sum(len(m.payload) for m in c.messages if m.type in (8, 9))
    check(media_bytes < 2 << 20, f"one player's worth of media in 3 s ({media_bytes} bytes)")
    c.close()

    # 3a. Waiting players per connection: 16 ids, and re-plays on one id replace each other.
    c = connected()
    for _ in range(20):
        c.create_stream()
    c.read_for(1)
    created = [m for m in c.messages if m.command() and m.command()[0] == "_result" and m.command()[1] > 1]
    errors = [m for m in c.messages if m.command() and m.command()[0] == "_error"]
    check(len(created) == 16 and len(errors) == 4, f"16 createStream answered, 4 refused ({len(created)}/{len(errors)})")
    for i in range(3000):
        c.play(f"wait{i}", sid=1)
    c.read_for(2)
    m = metrics()
    check(m["streams"] <= 3, f"3000 re-plays on one id hold one stream (server holds {m['streams']:.0f})")
    c.close()

    # 3b. The server-wide stream limit (60 here): 5 connections x 16 waiting players.
    conns = []
    refused = 0
    for k in range(5):
        c = connected()
        for _ in range(16):
            c.create_stream()
        for sid in range(1, 17):
            c.play(f"many{k}_{sid}", sid=sid)
        conns.append(c)
    for c in conns:
        c.read_for(1)
        refused += sum(1 for m in c.messages if m.status_code() == "NetStream.Play.Failed")
    m = metrics()
    check(m["streams"] <= 60, f"the server holds at most max_streams ({m['streams']:.0f})")
    check(refused >= 80 - 59, f"plays past max_streams were refused ({refused})")
    check(m.get("streams_total", 0) >= refused, "streams_total counted them")
    for c in conns:
        c.close()
    time.sleep(0.5)
    c = connected()
    c.create_stream()
    c.play("after_limit")
    check(c.wait_status("NetStream.Play.Start", 5) is not None, "a new stream plays once the others left")
    c.close()

    # 4a. Before connect: a 1 MiB message is refused at its header.
    s = rtmp_handshake(server.port)
    s.sendall(bytes([0x03, 0, 0, 0, 0x10, 0x00, 0x00, 20, 0, 0, 0, 0]) + bytes(4096))
    check(closed_by_peer(s, timeout=5), "a 1 MiB message before connect closes the connection")
    s.close()

    # 4b. A connection that has not published (a player) keeps the small bound after connect.
    bound0 = metrics().get("partial_message_bound", 0)
    c = connected()
    c.create_stream()
    c.play("cam")
    c.sock.sendall(bytes([0x03, 0, 0, 0, 0x10, 0x00, 0x00, 20, 0, 0, 0, 0]) + bytes(4096))
    check(closed_by_peer(c.sock, timeout=5), "a player's 1 MiB message closes its connection")
    c.close()

    def hold_partial(c, csid, length, sent):
        """Starts a `length`-byte video message on `csid` and sends `sent` bytes of it: it never completes."""
        head = bytes([csid]) + bytes(3) + struct.pack(">I", length)[1:] + bytes([9]) + struct.pack("<I", 1)
        body = bytes(sent)
        data = bytearray(head)
        for off in range(0, len(body), 65536):
            if off:
                data += bytes([0xC0 | csid])
            data += body[off:off + 65536]
        try:
            c.sock.sendall(bytes(data))
        except OSError:
            pass

    # 4c. A publisher that has sent no frame holds at most 2 MiB: four 1 MiB partial messages on
    # four chunk streams close it.
    c = connected()
    c.set_chunk_size(65536)
    c.create_stream()
    c.publish("pinned")
    c.wait_status("NetStream.Publish.Start", 5)
    for csid in (5, 6, 7, 8):
        hold_partial(c, csid, 1 << 20, (1 << 20) - 1)
    check(closed_by_peer(c.sock, timeout=5), "a new publisher's partial messages past 2 MiB close it")
    c.close()
    check(wait_for(lambda: metrics().get("partial_message_bound", 0) >= bound0 + 2, 5),
          "partial_message_bound counted both")
    check(re.search(r"event=protocol_error error=.*partial-message bound of a peer that sends media", server.log_text()),
          "log: the publisher's bound named")

    # 4d. Publishers' partial messages, each within its own bound, share one budget (4 MiB here).
    holders = []
    closed = 0
    for k in range(4):
        c = connected()
        c.set_chunk_size(65536)
        c.create_stream()
        c.publish(f"hold{k}")
        c.wait_status("NetStream.Publish.Start", 5)
        hold_partial(c, 5, 1536 * 1024, 1536 * 1024 - 1)  # 1.5 MiB: within a new publisher's 2 MiB
        holders.append(c)
        time.sleep(0.3)
    for c in holders:
        c.read_some(0.5)
        closed += c.closed or closed_by_peer(c.sock, timeout=0.5)
    m = metrics()
    check(closed >= 2, f"connections past the reassembly budget were closed ({closed} of 4)")
    check(m.get("reassembly_budget", 0) >= 1, "reassembly_budget counted")
    for c in holders:
        c.close()

    # 5. Names that could become paths or forge log lines.
    c = connected()
    c.create_stream()
    for name in ("../../etc/passwd", "a/../b", "x\ny event=forged", "/abs", "sp ace"):
        c.play(name)
    c.read_for(1.5)
    not_found = [m for m in c.messages if m.status_code() == "NetStream.Play.StreamNotFound"]
    check(len(not_found) == 5, f"5 bad names refused ({len(not_found)})")
    descs = [m.command()[2][-1].get("description", "") for m in not_found]
    check(all("Invalid stream name" in x for x in descs), f"each refusal says why ({descs[:2]})")
    c.close()
    pb = connected()
    pb.create_stream()
    pb.publish("../escape")
    check(pb.wait_status("NetStream.Publish.BadName", 5) is not None, "publish of '../escape' refused")
    pb.close()

    # 6. A paused live player outlives its publisher: the stream must not be freed under it.
    pb = connected()
    pb.create_stream()
    pb.publish("brief")
    check(pb.wait_status("NetStream.Publish.Start", 5) is not None, "brief publisher started")
    pl = connected()
    pl.create_stream()
    pl.play("brief")
    check(pl.wait_status("NetStream.Play.Start", 5) is not None, "player of brief started")
    pl.command("pause", None, True, 0.0, sid=1, txn=0)
    check(pl.wait_status("NetStream.Pause.Notify", 5) is not None, "paused")
    pb.close()
    time.sleep(1)
    pl.command("pause", None, False, 0.0, sid=1, txn=0)
    check(pl.wait_status("NetStream.Unpause.Notify", 5) is not None, "unpaused after the publisher left")
    pb = connected()
    pb.create_stream()
    pb.publish("brief")
    check(pb.wait_status("NetStream.Publish.Start", 5) is not None, "brief published again")
    pb.media(9, 0, bytes([0x17, 0, 0, 0, 0]) + bytes(20))
    pb.media(9, 40, bytes([0x17, 1, 0, 0, 0]) + bytes(200))
    check(pl.wait_for(lambda m: m.type == 9, 5) is not None, "the unpaused player gets the new publication")
    pl.close()
    pb.close()
    check(server.alive(), "server still running after pause, unpublish, unpause")

    _, err = rec.communicate(timeout=40)
    check(server.alive(), "server still running")
    check_same_packets("legit player", rec_path, source_tags, min_video=200, min_audio=300)
    m = metrics()
    for ev in ("rtmp_output_paused", "rtmp_output_overflow", "rtmp_unknown_stream_id", "rtmp_streams_per_connection",
               "bad_stream_name"):
        check(m.get(ev, 0) >= 1, f"/metrics counted {ev} ({m.get(ev)})")
finally:
    stop_proc(pub)
    rc = server.stop()
log = server.log_text()
check("event=output_overflow" in log, "log: output_overflow line")
check("event=stream_id_refused" in log, "log: stream_id_refused line")
check("event=reassembly_budget" in log, "log: reassembly_budget line")
check("event=forged" not in log.replace("\\x0ay event=forged", ""), "log: a name cannot forge a log line")
check(log.count("event=stream_id_refused") < 20, "log: refusals are rate-limited")
print("PASS")
