#!/usr/bin/python3
"""VOD: rtmpdump and ffmpeg download an FLV, a faststart MP4 and a moov-at-end MP4 (all generated
by ffmpeg): the received packets equal the source's (payload hashes and timestamps), the duration
matches, sending is paced (not the whole file at once), and getStreamLength answers."""
import os
import re
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg", "ffprobe", "rtmpdump")
server = vod_server("vod-download")
# One worker loop: each loop keeps its own index of a file, and building one reads the whole file
# through the threadpool. With two loops the play after the eviction could land on the loop that
# had not played movie.flv yet, whose index read put the file back in the page cache before the
# play's own reads (seen as reads_cached=7 reads_blocking=0 for it).
with open(server.config, "a") as f:
    f.write("workers: 1\n")
media = os.path.join(server.dir, "media")
SECONDS = 8
flv = make_media(os.path.join(media, "movie.flv"), seconds=SECONDS)
os.makedirs(os.path.join(media, "sub"))
subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", flv, "-c", "copy", "-movflags", "+faststart",
                os.path.join(media, "fast.mp4")], check=True)
subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", flv, "-c", "copy",
                os.path.join(media, "sub", "end.MP4")], check=True)
server.start()

cases = [
    ("flv", "movie.flv", flv),
    ("flv without extension", "movie", flv),
    ("faststart mp4", "mp4:fast.mp4", os.path.join(media, "fast.mp4")),
    ("moov-at-end mp4 in a subfolder", "mp4:sub/end.MP4", os.path.join(media, "sub", "end.MP4")),
]


def evict_from_page_cache(path):
    """Drops the file's pages from the kernel's cache, so the server's first reads of it must go to
    the disk (libuv's threadpool) instead of the page cache (read on the loop). True when it worked
    (fincore counts no resident page)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    out = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES", path],
                         capture_output=True, text=True)
    return out.returncode == 0 and out.stdout.strip() == "0"


def download(client, name, out):
    """One play of vod/NAME by rtmpdump or ffmpeg into `out`: the seconds it took."""
    t0 = time.time()
    if client == "rtmpdump":
        subprocess.run(["timeout", "-k", "2", "30", "rtmpdump", "-q", "-r", server.url("vod/" + name), "-o", out])
    else:
        subprocess.run(["timeout", "-k", "2", "30", "ffmpeg", "-nostdin", "-loglevel", "error", "-i",
                        server.url("vod/" + name), "-c", "copy", "-f", "flv", out])
    return time.time() - t0


source_packets = {}  # ffprobe's packets of each source, read once for both of its clients


def check_download(label, client, source, out, took):
    if source not in source_packets:
        source_packets[source] = ffprobe_packets(source)
    src = source_packets[source]
    got = ffprobe_packets(out)
    tag = f"{label} via {client}"
    check(len(got) == len(src), f"{tag}: {len(got)} packets, source has {len(src)}")
    for kind in ("video", "audio"):
        s_hashes = [p[2] for p in src if p[0] == kind]
        g_hashes = [p[2] for p in got if p[0] == kind]
        check(s_hashes == g_hashes, f"{tag}: every {kind} payload equals the source's")
        s_ts = [p[1] for p in src if p[0] == kind]
        g_ts = [p[1] for p in got if p[0] == kind]
        # rtmpdump/ffmpeg rebase nothing for VOD; allow 1 ms of rounding between timebases.
        check(all(abs(a - b) <= 1 for a, b in zip(s_ts, g_ts)), f"{tag}: {kind} timestamps equal the source's")
    dur = max(p[1] for p in got) / 1000.0
    check(abs(dur - SECONDS) < 0.2, f"{tag}: duration {dur:.2f} s matches {SECONDS} s")
    # Paced: sent at real time, at most ~5 s ahead of the player.
    check(took >= SECONDS - 5.5, f"{tag}: paced delivery ({took:.1f} s for {SECONDS} s of media)")


def resident(path):
    """True when every page of the file is in the page cache (fincore)."""
    out = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES", path], capture_output=True,
                         text=True)
    return out.returncode == 0 and out.stdout.strip().isdigit() and int(out.stdout) >= os.path.getsize(path)


# Every case with both clients at once (they are paced in real time, so one after the other would
# only wait), except the last play of "movie", which comes alone after the file left the page cache.
plays = [(label, client, name, source, os.path.join(server.dir, f"{client}-{i}.flv"))
         for i, (label, name, source) in enumerate(cases) for client in ("rtmpdump", "ffmpeg")]
last = next(p for p in plays if p[2] == "movie" and p[1] == "ffmpeg")
first = [p for p in plays if p is not last]
for source in {p[3] for p in first}:
    with open(source, "rb") as f:
        f.read()  # into the page cache, for the check of the cached read path below
check(resident(flv), "movie.flv is in the page cache before the first plays")
took = {}
threads = [threading.Thread(target=lambda p=p: took.__setitem__(p, download(p[1], p[2], p[4]))) for p in first]
for t in threads:
    t.start()
for t in threads:
    t.join()
for p in first:
    check_download(p[0], p[1], p[3], p[4], took[p])
# The file is indexed by now (on the one worker loop), so only this play's sending reads are left
# to hit the disk.
evicted = evict_from_page_cache(flv)
check_download(last[0], last[1], last[3], last[4], download(last[1], last[2], last[4]))

# Both read paths were used and gave the same packets: the first plays of movie.flv read it from the
# page cache on the loop; the last one, after eviction, from the disk through the threadpool.
reads = [(int(c), int(b)) for c, b in re.findall(
    r'event=vod_complete app=vod stream="movie(?:\.flv)?" reads_cached=(\d+) reads_blocking=(\d+)',
    server.log_text())]
check(len(reads) == 4, f"the four plays of movie.flv logged their reads (cached, blocking): {reads}")
check(all(c > 0 and b == 0 for c, b in reads[:3]), f"a cached file is read on the loop: {reads[:3]}")
if evicted:
    check(len(reads) == 4 and reads[3][1] > 0, f"the play after eviction read from the disk (threadpool): {reads[3:]}")
else:
    print("note: the page cache could not be emptied here (fincore still counts pages): "
          "the threadpool path was not forced", flush=True)

# getStreamLength through ffmpeg (it asks before playing VOD): the log shows the play; the length is
# checked with the probe's result line.
lines = probe(server.url("vod/mp4:fast.mp4"), "--duration", "2", "--start", "0")
check(any("NetStream.Play.Start" in l for l in lines), "probe: VOD Play.Start")
check(any(l.startswith("uc ") and "StreamIsRecorded" in l for l in lines), "probe: StreamIsRecorded for VOD")
check(server.alive(), "server still running")
rc = server.stop()
check(rc == 0, "server exits 0")
print("PASS")
