#!/usr/bin/python3
"""A recording whose disk fills up (simulated without root by a file-size limit, ulimit -f: the
write fails with EFBIG as it would with ENOSPC): the recording ends with a log line, the live
player of the stream keeps playing intact packets, the process keeps serving (a new publisher
and player work). What reached the disk is a .part that the next start (without the limit)
repairs into a file that plays."""
import glob
import os
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg", "ffprobe")
LIMIT = 400_000
tmp = workdir("record-full")
rec = os.path.join(tmp, "rec")
server = Server("record-full", apps=f"  live: {{ type: live, record: true, record_path: {rec} }}\n")
src = make_media(os.path.join(server.dir, "src.flv"), seconds=30)


def limited():
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


server.log = open(server.log_path, "w")
server.proc = subprocess.Popen([binary("server/sluice"), "--config", server.config], stdout=server.log,
                               stderr=subprocess.STDOUT, preexec_fn=limited)
check(wait_port(server.port), "server started with a 400 KB file-size limit")
try:
    pub = publish_ffmpeg(src, server.url("live/cam"))
    time.sleep(1)
    out = os.path.join(tmp, "player.flv")
    player = subprocess.Popen(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", server.url("live/cam"), "-t", "14",
                               "-c", "copy", "-f", "flv", "-y", "/dev/stdout"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    data = player.communicate(timeout=60)[0]
    with open(out, "wb") as f:
        f.write(data)
    log = server.log_text()
    check("event=record_failed" in log, "the recording ended with a log line when the disk was full")
    check(server.alive(), "the server kept running")
    check_same_packets("the live player during and after the failure", out, flv_tags(src), min_video=300,
                       min_audio=300)
    check_new_stream_works(server, src)  # still serving
    stop_proc(pub)
finally:
    rc = server.stop()
check(rc == 0, "server exits 0")
# What reached the disk is finished at once when there is room for it (the final file is no
# larger than the valid part of the .part), else left as .part for the next start to repair.
parts = glob.glob(os.path.join(rec, "live", "cam-*.part"))
if parts:
    server.start()  # no limit now
    deadline = time.time() + 15
    while time.time() < deadline and "event=record_repaired" not in server.log_text():
        time.sleep(0.2)
    check("event=record_repaired" in server.log_text(), "the .part the full disk left is repaired at the next start")
    check(server.stop() == 0, "server exits 0")
fixed = glob.glob(os.path.join(rec, "live", "cam-*.flv"))
check(len(fixed) == 1 and os.path.getsize(fixed[0]) <= LIMIT, f"the recording up to the full disk is a file ({fixed})")
dur = float(subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", fixed[0]],
                           capture_output=True, text=True).stdout.strip() or 0)
check(dur > 3, f"which plays ({dur:.1f} s)")
check(contiguous_in(media_runs(flv_tags(fixed[0]))[9], media_runs(flv_tags(src))[9]) == 0,
      "and holds the stream from its start")
print("PASS")
