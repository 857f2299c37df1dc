#!/usr/bin/python3
"""300 concurrent VOD players (one sluice-bench process) for 20 s: all receive valid data starting
on a keyframe, at real-time pace (no stalls), and the server's memory per player is reported."""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

PLAYERS = 300
SECONDS = 20
require_tools("ffmpeg")
server = vod_server("vod-many", )
server.env.update(SMALL_QUARANTINE)
media = os.path.join(server.dir, "media")
make_media(os.path.join(media, "movie.flv"), seconds=40, vbitrate="300k")
server.start()
time.sleep(0.5)
rss0 = server.rss_kb()
out = os.path.join(server.dir, "bench.json")
bench = subprocess.Popen([binary("bench/load/sluice-bench"), "play", "-n", str(PLAYERS), "--rate", "100", "-d",
                          str(SECONDS), "-q", "--start", "0", "--json", out, server.url("vod/movie.flv")],
                         stdout=subprocess.PIPE, text=True)
peak = rss0
while bench.poll() is None:
    peak = max(peak, server.rss_kb())
    time.sleep(0.5)
print(bench.stdout.read())
summary = json.load(open(out))
rc = server.stop()
players = summary["players"] if "players" in summary else summary
ok = players.get("ok", 0)
check(ok == PLAYERS and players.get("failed", 1) == 0, f"all {PLAYERS} players ok ({ok})")
check(players["stalls"] == 0 and players["clients_with_stalls"] == 0, "no player stalled (real-time pace kept)")
check(players["keyframe_first"] == PLAYERS, "every player's first picture was a keyframe")
check(players["clients_non_monotonic"] == 0, "timestamps monotonic for every player")
# Real time: 20 s of a ~0.35 Mb/s file, with at most ~5 s sent ahead, per player.
per_client = players["bytes_in"] / PLAYERS
rate = os.path.getsize(os.path.join(media, "movie.flv")) / 40.0
check(0.6 * rate * SECONDS < per_client < rate * (SECONDS + 6), f"paced: {per_client:.0f} bytes per player for {SECONDS} s")
per_player = (peak - rss0) / PLAYERS
print(f"server RSS: idle {rss0} KB, peak {peak} KB, {per_player:.1f} KB per player (ASan build)")
check(rc == 0, "server exits 0")
print("PASS")
