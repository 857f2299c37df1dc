#!/usr/bin/python3
"""Memory a stranger can pin with partial RTMP messages, on the default configuration (issue 39;
docs/configuration.md, "Limits"). While ffmpeg publishes and rtmpdump plays (its capture compared
with the source byte for byte):
  - 16 connections connect, publish a name each and open four chunk streams of 15 MiB messages,
    sending 4 MiB of each: each is closed once it holds 2 MiB (a publisher that has sent no frame
    yet), with a log line naming its bound; the server's RSS grows by at most 64 MiB;
  - 16 more connect and, as players, start one such message: each is closed at its header (64 KiB
    for a connection that has not published).
Before the bounds followed the role, 16 connections made the server grow by about 500 MiB."""
import os
import re
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from rtmp_client import RtmpClient  # noqa: E402

require_tools("ffmpeg", "rtmpdump")
http_port = free_port()
server = Server("partial-memory", extra_yaml=f"http:\n  listen: 127.0.0.1:{http_port}\n",
                # freed memory in ASan's quarantine is not memory the server holds
                env=SMALL_QUARANTINE)
server.start()
check(wait_port(http_port), "the HTTP listener is up")
legit = LegitPair(server, seconds=25, play_s=18)


def guard(event):
    return guard_events(http_port).get(event, 0)


def pin(publish, k):
    """One connection: connect, maybe publish, then four 15 MiB messages of which 4 MiB each are
    sent. True when the server closed it."""
    c = RtmpClient(server.port)
    c.connect("live")
    c.wait_for(lambda m: m.command() and m.command()[0] == "_result", 5)
    c.set_chunk_size(65536)
    c.create_stream()
    if publish:
        c.publish(f"pin{k}")
        c.wait_status("NetStream.Publish.Start", 5)
    else:
        c.play("cam")
    length, sent = 15 << 20, 4 << 20
    try:
        for csid in (5, 6, 7, 8):
            head = bytes([csid]) + bytes(3) + struct.pack(">I", length)[1:] + bytes([9]) + struct.pack("<I", 1)
            data = bytearray(head)
            for off in range(0, sent, 65536):
                if off:
                    data += bytes([0xC0 | csid])
                data += bytes(65536)
            c.sock.sendall(bytes(data))
    except OSError:
        pass
    closed = closed_by_peer(c.sock, timeout=5)
    c.close()
    return closed


rss0 = server.rss_kb()
peak = [rss0]
sampling = threading.Event()


def sample():
    while not sampling.is_set():
        peak[0] = max(peak[0], server.rss_kb())
        time.sleep(0.05)


sampler = threading.Thread(target=sample, daemon=True)
sampler.start()
bound0 = guard("partial_message_bound")
results = [None] * 16
threads = [threading.Thread(target=lambda k=k: results.__setitem__(k, pin(True, k))) for k in range(16)]
for t in threads:
    t.start()
for t in threads:
    t.join(timeout=60)
sampling.set()
sampler.join()
grown_mib = (peak[0] - rss0) / 1024
print(f"16 publishers pinning: RSS {rss0} KiB -> peak {peak[0]} KiB (+{grown_mib:.1f} MiB); closed {results.count(True)}")
check(results.count(True) == 16, f"each of the 16 was closed ({results.count(True)})")
check(grown_mib <= 64, f"the server grew by at most 64 MiB ({grown_mib:.1f})")
check(guard("partial_message_bound") - bound0 == 16, "partial_message_bound counted each")
lines = re.findall(r"conn=\d+ peer=\S+ event=protocol_error error=\"[^\"]*partial-message bound of a peer that sends "
                   r"media: 4 times its largest message so far, at least 2048 KiB", server.log_text())
check(len(lines) == 16, f"a log line for each, naming the connection and its bound ({len(lines)})")

bound1 = guard("partial_message_bound")
results = [pin(False, k) for k in range(16)]
check(results.count(True) == 16, f"16 players each closed at their first large message ({results.count(True)})")
check(guard("partial_message_bound") - bound1 == 16, "... counted")
check(len(re.findall(r"event=protocol_error error=\"[^\"]*partial-message bound of a connection that has not published",
                     server.log_text())) == 16,
      "... each with a log line")

legit.finish(min_packets=200)
check(server.stop() == 0, "the server exits cleanly")
print("partial_memory_test: OK")
