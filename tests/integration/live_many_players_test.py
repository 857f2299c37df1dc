#!/usr/bin/python3
"""200 simultaneous rtmpdump players of one live stream for 20 s: every one receives a valid FLV
stream with the expected byte count (within 10%), and the publisher is not slowed down."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

PLAYERS = int(os.environ.get("SLUICE_MANY_PLAYERS", "200"))
SECONDS = 20
require_tools("ffmpeg", "rtmpdump")
server = Server("many-players").start()
d = server.dir
src = make_media(os.path.join(d, "src.flv"), seconds=60, vbitrate="400k")
source_tags = flv_tags(src)
url = server.url("live/many")
pub = publish_ffmpeg(src, url)
time.sleep(2)
cpu0 = server.cpu_seconds()
outs = [os.path.join(d, f"p{i}.flv") for i in range(PLAYERS)]
procs = []
for o in outs:
    procs.append(subprocess.Popen(["timeout", "-s", "INT", "-k", "3", str(SECONDS), "rtmpdump", "-q", "--live",
                                   "-r", url, "-o", o], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
peak_rss = 0
t_end = time.time() + SECONDS + 5
while any(p.poll() is None for p in procs) and time.time() < t_end:
    peak_rss = max(peak_rss, server.rss_kb())
    time.sleep(0.5)
for p in procs:
    if p.poll() is None:
        p.kill()
    p.wait()
cpu = server.cpu_seconds() - cpu0
check(pub.poll() is None, "publisher still running")
stop_proc(pub)
rc = server.stop()

# Expected bytes: the source's bytes over the time window each player was connected, measured by
# the median player (they all ran the same 20 s).
sizes = sorted(os.path.getsize(o) if os.path.exists(o) else 0 for o in outs)
median = sizes[len(sizes) // 2]
src_rate = os.path.getsize(src) / 60.0
print(f"players={PLAYERS} median bytes={median} min={sizes[0]} max={sizes[-1]} "
      f"source rate={src_rate:.0f} B/s server cpu={cpu:.2f}s peak rss={peak_rss} KB")
check(median > 0.8 * src_rate * (SECONDS - 3), "the median player received about the stream's rate")
within = sum(1 for s in sizes if abs(s - median) <= 0.1 * median)
check(within == PLAYERS, f"every player's byte count within 10% of the median ({within}/{PLAYERS})")
bad = 0
for o in outs[:: max(1, PLAYERS // 20)]:  # full packet comparison on a sample of 20 captures
    tags = flv_tags(o)
    runs = media_runs(tags)
    src_runs = media_runs(source_tags)
    if contiguous_in(runs[9][:-2], src_runs[9]) < 0 or contiguous_in(runs[8][:-2], src_runs[8]) < 0:
        bad += 1
check(bad == 0, "sampled captures are contiguous runs of the source packets")
valid = sum(1 for o in outs if len(flv_tags(o)) > 100)
check(valid == PLAYERS, f"every capture is a valid FLV stream ({valid}/{PLAYERS})")
check(rc == 0, "server exits 0")
print("PASS")
