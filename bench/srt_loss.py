#!/usr/bin/python3
"""bench/srt_loss.py: SRT (or RTMP) publishing through a lossy link, run by hand (as root: it makes
a network namespace):
  cd build/asan && SLUICE_BUILD_DIR=$PWD SLUICE_SOURCE_DIR=$PWD/../.. \
      /usr/bin/python3 ../../bench/srt_loss.py [--first | --rtmp]
The link, the priorities, when the loss starts and what is checked are those of
tests/integration/srt_loss_tools.py, which this shares with the CI test srt_loss_test.py: 60 s of
5 % loss and 20 ms delay each way, SRT at 200 ms latency, every frame at an RTMP player checked.
Every mode also plays the stream with rtmp-probe and prints what a player saw of it: gaps between
video frames' arrivals and each frame's delay above the run's fastest (docs/benchmarks.md, "SRT
against RTMP", "Under loss").

Modes:
  - default: netem's method, every IP packet lost at 5 %, SRT retransmissions too. Then libsrt
    itself gives a packet up now and then: 200 ms at a 40 ms round trip is the SRT deployment
    guide's bare minimum for up to 7 % loss (5 round trips), about 3 tries here, so a packet whose
    retransmission is lost twice more is dropped (pktRcvDropTotal), about once in 4000 losses, in
    about 1 run of 60 s in 20; a busy machine (a starved sender or receiver: the round trip libsrt
    measures jumps) makes it likelier. Such a run cannot show that the server loses nothing, so
    this mode publishes again (live/cam2, live/cam3), up to RUNS runs, checks the first run where
    libsrt dropped nothing, and fails if every run had drops. Anything else fails at once.
  - --first: the CI test's method, loss of first transmissions (a retransmitted SRT data packet is
    never dropped; srt_loss_test.py's header gives the odds of a drop): one run, no retry.
  - --rtmp: the comparison. ffmpeg publishes the same FLV over RTMP from inside the namespace
    (the server's RTMP listener is on the link's address too), every IP packet lost at 5 %; TCP
    repairs every loss, late. One run; the player's frames are checked the same way.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))
from common import check  # noqa: E402
from srt_loss_tools import LossRun  # noqa: E402

RUNS = 3  # publisher runs at most (default mode), until one where libsrt drops nothing

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
mode = ap.add_mutually_exclusive_group()
mode.add_argument("--first", action="store_true", help="loss of first transmissions (the CI test's method)")
mode.add_argument("--rtmp", action="store_true", help="publish over RTMP through the same link")
args = ap.parse_args()

run = LossRun("srt-loss-bench", method="first" if args.first else "all", rtmp_on_link=args.rtmp)
rc = None
try:
    if args.rtmp:
        s = run.session(1, "rtmp", probe=True)
    else:
        runs = 1 if args.first else RUNS
        for n in range(1, runs + 1):
            s = run.session(n, probe=True)
            dropped = run.srt_drops(s)
            if not dropped or n == runs:
                break
            # libsrt gave up on a packet (see "Modes" above): this run cannot show that the server
            # loses nothing.
            print(f"note: {s.name}: libsrt dropped packets; first (s under loss, lost, dropped, rtt ms): "
                  f"{dropped[0]}; one more run", flush=True)
        run.check_srt_figures(s)
    run.check_player(s)
    figures = run.arrival_figures(s)
    check(run.server.alive(), "server still running")
finally:
    rc = run.close()
run.check_link(rc)
print(f"player ({s.protocol}): " + json.dumps(figures))
print(f"wall time {time.time() - run.started:.0f} s, CPU {run.cpu_seconds() - run.cpu_from:.1f} s")
print("PASS")
