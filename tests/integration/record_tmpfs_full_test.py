#!/usr/bin/python3
"""A recording on a real file system that fills up (a 1 MiB tmpfs the test mounts): the write
fails with ENOSPC, the recording ends with a log line, the live player keeps playing intact
packets and the server keeps serving. The .part that could not be finished (no room for the
final file) stays; once the file system has room again (remounted larger), the next start
repairs it into a file that plays from the stream's start. Needs root, or sudo without a password,
for mount(8)."""
import glob
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg", "ffprobe", "mount", "umount")
tmp = workdir("record-tmpfs")
rec = os.path.join(tmp, "rec")
os.makedirs(rec)
SUDO = [] if os.geteuid() == 0 else (["sudo", "-n"] if shutil.which("sudo") else [])
OWNER = f"uid={os.getuid()},gid={os.getgid()}"  # the server runs as this user
m = subprocess.run(SUDO + ["mount", "-t", "tmpfs", "-o", f"size=1m,{OWNER}", "tmpfs", rec], capture_output=True,
                   text=True)
if m.returncode != 0:
    skip(f"cannot mount a tmpfs ({m.stderr.strip()}): this test needs root")
try:
    server = Server("record-tmpfs", apps=f"  live: {{ type: live, record: {{ dir: {rec} }} }}\n").start()
    src = make_media(os.path.join(server.dir, "src.flv"), seconds=20, vbitrate="1500k", noise=True)
    try:
        pub = publish_ffmpeg(src, server.url("live/cam"))
        time.sleep(1)
        out = os.path.join(tmp, "player.flv")
        p = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", server.url("live/cam"), "-t", "12",
                            "-c", "copy", "-f", "flv", "-y", out], capture_output=True, timeout=60)
        log = server.log_text()
        check("event=record_failed" in log and "no space left on device" in log.lower(),
              "the recording ended with a log line when the tmpfs was full (ENOSPC)")
        check(server.alive(), "the server kept running")
        check_same_packets("the live player during and after the failure", out, flv_tags(src), min_video=250,
                           min_audio=250)
        check_new_stream_works(server, src)
        stop_proc(pub)
    finally:
        rc = server.stop()
    check(rc == 0, "server exits 0")
    parts = glob.glob(os.path.join(rec, "live", "cam-*.flv.part"))
    check(len(parts) == 1 and not glob.glob(os.path.join(rec, "live", "cam-*.flv")),
          f"with no room for the final file, the .part stays ({os.listdir(os.path.join(rec, 'live'))})")
    # Room again: the next start repairs it.
    subprocess.run(SUDO + ["mount", "-o", f"remount,size=8m,{OWNER}", rec], check=True)
    server.start()
    deadline = time.time() + 15
    while time.time() < deadline and "event=record_repaired" not in server.log_text():
        time.sleep(0.2)
    check("event=record_repaired" in server.log_text(), "the next start repairs it")
    check(server.stop() == 0, "server exits 0")
    fixed = glob.glob(os.path.join(rec, "live", "cam-*.flv"))
    check(len(fixed) == 1 and not glob.glob(os.path.join(rec, "live", "cam-*.part")), f"into one file ({fixed})")
    dur = float(subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0",
                                fixed[0]], capture_output=True, text=True).stdout.strip() or 0)
    check(dur > 2, f"which plays ({dur:.1f} s)")
    check(contiguous_in(media_runs(flv_tags(fixed[0]))[9], media_runs(flv_tags(src))[9]) == 0,
          "and holds the stream from its start")
finally:
    subprocess.run(SUDO + ["umount", rec], capture_output=True)
print("PASS")
