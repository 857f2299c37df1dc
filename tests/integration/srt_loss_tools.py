"""SRT under loss: what srt_loss_test.py (CI) and bench/srt_loss.py (by hand) share. An SRT
publisher behind a lossy link (5 % loss and 20 ms delay each way: a 40 ms round trip) publishes
60 s through Sluice (srt.latency 200ms) to an RTMP player on loopback; SRT's retransmission must
repair every loss, so the player gets every frame. Runs as root: it makes a network namespace.

The link. The publisher (ffmpeg, `-re -c copy -f mpegts srt://...?latency=200000`: ffmpeg's SRT
latency is in microseconds) runs in a network namespace made here; Sluice listens for SRT on the
root side's address of the link to it, and for RTMP and HTTP on 127.0.0.1 (no loss there).
The project's machines, CI's among them, have no netem: their kernel is built without
CONFIG_NET_SCH_NETEM (nor sch_fq, which a BPF delay would need), so `tc qdisc add ... netem`
fails with "Specified qdisc kind is unknown". The link is a pair of TUN devices, one moved into
the namespace, joined by a child process (this file run with --link) that does what
`netem loss 5% delay 20ms` on both ends of a veth pair would: it drops IP packets with
probability 5 %, independently in each direction, and delivers the others 20 ms later, in order.
Which packets it may drop is its method:
  - "all": any IP packet (netem's loss; bench/srt_loss.py's default);
  - "rtp" (webrtc_loss_test.py): any IP packet, as "all", but what the link follows is RTP (SRTP's
    12-byte header is in clear): a packet of an SSRC and sequence number that passed or was
    dropped before is a retransmission (a NACK's answer, on the main SSRC: Sluice sends no RTX),
    which repairs a dropped one; the stories below are of RTP packets, with the RTCP packets the
    other end sent meanwhile (SRTCP hides which are NACKs) instead of NAKs;
  - "first" (loss of first transmissions; srt_loss_test.py): any IP packet except an SRT data
    packet sent again. The link reads the SRT header after the UDP header: a data packet has the
    header's first bit 0 (a control packet 1), and its second 32-bit word (PP|O|KK|R|message
    number) holds R, "retransmitted", in bit 26 (libsrt's packet.h: MSGNO_REXMIT = Bits<26>; the
    byte at offset 4, mask 0x04), which libsrt sets on every retransmission when both sides speak
    HSv5. Nor a NAK (control type 3): the repair of a loss is then one NAK and one retransmission,
    about 60 ms of the 200, so only a stall of the machine of 140 ms or more could make it late
    (the ~100 ms CPU stalls this machine shows now and then, plus a lost NAK or two, could: about
    1 run in 150-200 before NAKs passed). First transmissions, ACKs, ACKACKs, keepalives (and
    every TCP segment) are lost at 5 %.
The link counts what it carried and dropped, the retransmissions and NAKs; for every data packet
it dropped, its story: when the next packet passed (which shows the server the loss 20 ms
later), each NAK naming it (and whether the link dropped that NAK), and when its retransmission
passed (the repair; the server gets it 20 ms later); the gaps between NAKs naming the same packet
(libsrt's periodic NAK); each end's longest silence; and how late it ever delivered a packet.
Beside it, a stall watch per CPU (this file run with --watch) at the highest real-time priority
tells how long a CPU was ever gone (the hypervisor running another guest's vCPU, or the kernel
not yielding): what no priority of the test could have helped.

Priorities. SRT has 200 ms to repair a loss, a few round trips. On 2 cores beside a build, a
benchmark or other tests, a starved sender or receiver thread asks for or sends a retransmission
too late: seen here, NAKs answered 200 ms late, and drops in most runs, at nice -10 too (the kernel
shares the CPU between sessions first: CONFIG_SCHED_AUTOGROUP). That says nothing of the server's
media path, so the SRT ends run at real-time priorities: the whole publisher (chrt SCHED_RR 2;
ffmpeg copying is light) and the whole server (set once it listens; threads started later inherit
it): libsrt's threads (SRT:...) at SCHED_RR 2, the loops and the SrtPoller thread at SCHED_RR 1.
The whole server, not only libsrt's threads: libsrt's receiving thread takes locks that the
server's threads take too (the receive buffer's in srt_recvmsg, the epoll's in srt_epoll_uwait),
and with only libsrt's threads real-time one run (of 10) dropped a packet when the server went
223 ms without handling the packet that showed a loss, the link on time; a lock held by a
preempted server thread is one of the two causes that fit (srt_loss_test.py, "The drop"). The
player runs as usual. The link runs at SCHED_FIFO 10 (at most a few tens of ms late;
at a normal priority it stalled 50-80 ms beside a build).

When the loss starts. The link is clean (20 ms each way, no loss) until the publisher is live
and libsrt has measured the round trip (its figures show an RTT other than its initial 100 ms);
then it drops one SRT data packet alone, which libsrt repairs, and then the loss starts, for the
rest of the run (60 s). Both steps step around libsrt (1.5.1), not the server; with loss from the
first packet, srt-live-transmit as the receiver fared the same. A lost handshake reply fails
ffmpeg's connect now and then. And a receiver sends its periodic NAKs every 300 ms (UDT's initial
interval) until its first loss report sets the interval to (RTT + 4 x RTTVar) / 2, about 25 ms
here; before that the timer is re-armed 300 ms ahead at every check, so when the immediate NAK of
a connection's first loss, or its retransmission, is lost (1 in 10), the next NAK comes up to
300 ms later and the packet misses the 200 ms latency.

What is exact. The source is an FLV (H.264 with a keyframe every 2 s and no B-frames, AAC)
encoded once; ffmpeg turns it into MPEG-TS (in-band SPS/PPS before every keyframe, an access unit
delimiter before every frame, AAC in ADTS) and Sluice turns that back into FLV tags: parameter
sets leave the frames (they make the sequence header), delimiters are dropped, ADTS headers are
removed. So every video and audio tag body the player records is byte for byte the source FLV's
(the x264 SEI of the first frame included): the player's payload hashes must be one contiguous run
of the source's, from the keyframe the player joined on through the source's 60th second, which
is what "no missing or corrupt frame" means. The source runs one second longer: when ffmpeg
closes its SRT socket, libsrt's live mode (no linger) drops what is still in flight and what the
receiver still holds for its 200 ms latency, and a lost last packet is never reported (a loss is
found by the packet after it), so the stream's last few hundred ms are not SRT's to deliver. The
player's video timestamps must step by exactly one frame (40 ms) and equal the source's shifted by
a constant; its file must decode without an error. The stats API must show the publisher's SRT
figures with packets lost and retransmitted (the loss happened and SRT repaired it: on a
publisher's row, the retransmitted packets it received) and never one dropped, a round trip of
the link's 40 ms, no MPEG-TS continuity error or dropped frame; the connection's srt_close log
line must show no continuity error.
"""
import atexit
import collections
import ctypes
import fcntl
import json
import os
import random
import resource
import select
import signal
import socket
import statistics
import struct
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (AsyncProbe, Server, check, contiguous_in, fail, flv_tags, free_port, probe_events,  # noqa: E402
                    require_tools, skip, stop_proc, wait_for, wait_port)

LOSS = 0.05           # per packet, each direction
DELAY_S = 0.020       # each direction: a 40 ms round trip
SECONDS = 60          # the publisher's run under loss, which every frame must survive
LATENCY_MS = 200      # srt.latency and the publisher's
FPS = 25
FRAME_MS = 1000 // FPS
GOP = 50
AAC_FRAME_MS = 1024 * 1000 / 44100
TS_AUDIO_PID = 0x101  # ffmpeg's MPEG-TS muxer: video 0x100, audio 0x101
NS_PREFIX = "sluice-srtloss-"
METHODS = ("all", "first", "rtp")


# ---- the lossy link: this file run as `srt_loss_tools.py --link ROOT_DEV NS_DEV LOSS DELAY SEED METHOD` ----

TUNSETIFF = 0x400454CA
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000
PR_SET_PDEATHSIG = 1
SRT_NAK = 3  # a control packet's type (UMSG_LOSSREPORT)


def open_tun(name):
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH22x", name.encode(), IFF_TUN | IFF_NO_PI))
    return fd


def srt_header(pkt):
    """The SRT packet in an IPv4 packet (UDP, then a 16-byte SRT header), or None: ("data",
    sequence number, retransmitted) or ("control", control type, False)."""
    if len(pkt) < 20 or pkt[0] >> 4 != 4 or pkt[9] != 17:
        return None
    h = pkt[(pkt[0] & 0x0F) * 4 + 8:][:16]
    if len(h) < 16:
        return None
    if h[0] & 0x80:
        return "control", ((h[0] & 0x7F) << 8) | h[1], False
    return "data", int.from_bytes(h[0:4], "big"), bool(h[4] & 0x04)  # R: bit 26 of the second word


def rtp_header(pkt):
    """The RTP or RTCP packet in an IPv4 packet (UDP, then SRTP's or SRTCP's header, in clear), or
    None: ("data", (SSRC, sequence number), False), or ("control", "rtcp", False) (RTCP's packet
    types 192-223 where RTP has its marker bit and payload type; RFC 5761)."""
    if len(pkt) < 20 or pkt[0] >> 4 != 4 or pkt[9] != 17:
        return None
    h = pkt[(pkt[0] & 0x0F) * 4 + 8:][:12]
    if len(h) < 12 or h[0] >> 6 != 2:
        return None
    if 192 <= h[1] <= 223:
        return "control", "rtcp", False
    return "data", (int.from_bytes(h[8:12], "big"), int.from_bytes(h[2:4], "big")), False


def nak_sequences(pkt):
    """The sequence numbers an SRT NAK (in an IPv4 packet) names: its loss list after the header,
    single numbers and ranges (first number with the top bit set, then the last)."""
    body = pkt[(pkt[0] & 0x0F) * 4 + 8 + 16:]
    words = [int.from_bytes(body[i:i + 4], "big") for i in range(0, len(body) - 3, 4)]
    out, i = [], 0
    while i < len(words):
        if words[i] & 0x80000000 and i + 1 < len(words):
            first = words[i] & 0x7FFFFFFF
            out += range(first, min(words[i + 1], first + 63) + 1)
            i += 2
        else:
            out.append(words[i])
            i += 1
    return out


def run_link(root_dev, ns_dev, loss, delay_s, seed, method):
    """Joins two TUN devices like a cable with netem's `delay DELAY` on both ends, and from SIGUSR1
    on `loss LOSS` too: every IP packet one end's kernel sends is dropped with probability `loss`
    (method "first": never an SRT retransmission; "rtp": follows RTP, not SRT) or written to the
    other end `delay_s` later (a fixed delay keeps the order). SIGHUP stops the loss and prints
    what the link carried and dropped while the loss was on; SIGUSR2 drops the next SRT data
    packet from the namespace, and only that one. Ends on SIGTERM or when its parent dies (the
    devices go with it), printing the same."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    lossy, prime, report = [], [], []
    signal.signal(signal.SIGUSR1, lambda *_: lossy.append(True))
    signal.signal(signal.SIGHUP, lambda *_: (lossy.clear(), report.append(True)))
    signal.signal(signal.SIGUSR2, lambda *_: prime.append(True))
    try:  # a real-time priority: the delay must not wait for the server, ffmpeg or a build on 2 cores
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
    except OSError:
        os.nice(-10)
    a, b = open_tun(root_dev), open_tun(ns_dev)
    rng = random.Random(seed)
    other = {a: b, b: a}
    queue = {a: collections.deque(), b: collections.deque()}
    seen = {a: 0, b: 0}
    lost = {a: 0, b: 0}
    n = collections.Counter()  # retransmissions and NAKs, carried and dropped (both ways)
    dropped_at = {}  # (direction, sequence number) of a dropped data packet: when, until a retransmission passes
    repairs = []  # seconds from a data packet's drop to its retransmission passing the link
    nak_last = {}  # sequence number: when a NAK last named it
    nak_gaps = []  # seconds between two NAKs naming the same packet: the receiver's periodic NAK
    late = [0.0]  # the longest a packet waited past its 20 ms: the link's own stalls
    last_from = {}  # when each end last sent a packet
    silence = {a: (0.0, 0.0), b: (0.0, 0.0)}  # each end's longest silence under loss: (s, when after the loss began)
    loss_began = [0.0]
    trace = {}  # a dropped data packet's story until repaired: [(ms after its drop, event)]
    waits = []  # seconds from the packet that showed the server a loss to the retransmission, at the link
    slowest = []  # (wait s, the story) of the slowest repairs
    slow = []  # (s into the loss at the drop, s to the repair) of every repair 100 ms or more after its drop
    rtp_passed = set()  # method "rtp": (direction, (SSRC, sequence number)) of every RTP packet so far
    rtp_repaired = set()  # ... SSRCs with a repair: a dropped packet of another (audio: no NACK) is not "unrepaired"

    def print_stats():
        r, g, w = sorted(repairs), sorted(nak_gaps), sorted(waits)
        if g:  # how long the server took to name a packet again, in 10 ms steps: "20-29:N"
            steps = collections.Counter(int(x * 100) for x in g)
            print("nak gaps ms " + " ".join(f"{k * 10}-{k * 10 + 9}:{steps[k]}" for k in sorted(steps)), flush=True)
        if slow:  # each one's drop (s into the loss) and repair (ms after the drop): "12.345+170"
            print("repairs over 100 ms " + " ".join(f"{at:.3f}+{took * 1000:.0f}" for at, took in slow), flush=True)
        for took, story in sorted(slowest, reverse=True)[:3]:
            print(f"slow repair, waited {took * 1000:.0f} ms, {story[0] - loss_began[0]:.1f} s into the loss: " +
                  ", ".join(f"{e} +{ms:.0f}" for ms, e in story[1:]), flush=True)
        print(f"stats to_ns={seen[a]} to_ns_lost={lost[a]} from_ns={seen[b]} from_ns_lost={lost[b]} "
              f"rexmit={n['rexmit']} rexmit_lost={n['rexmit_lost']} naks={n['nak']} naks_lost={n['nak_lost']} "
              f"repaired={len(r)} unrepaired={sum(method != 'rtp' or k[1][0] in rtp_repaired for k in dropped_at)} "
              f"repair_p50_ms={round(r[len(r) // 2] * 1000) if r else 0} "
              f"repair_p99_ms={round(r[len(r) * 99 // 100] * 1000) if r else 0} "
              f"repair_max_ms={round(r[-1] * 1000) if r else 0} "
              f"wait_p50_ms={round(w[len(w) // 2] * 1000) if w else 0} wait_max_ms={round(w[-1] * 1000) if w else 0} "
              f"nak_repeats={len(g)} "
              f"nak_gap_min_ms={round(g[0] * 1000) if g else 0} "
              f"nak_gap_p50_ms={round(g[len(g) // 2] * 1000) if g else 0} "
              f"server_silence_ms={round(silence[a][0] * 1000)} server_silence_at_s={round(silence[a][1])} "
              f"publisher_silence_ms={round(silence[b][0] * 1000)} publisher_silence_at_s={round(silence[b][1])} "
              f"late_ms={round(late[0])}", flush=True)

    print("ready", flush=True)
    try:
        while True:
            if report:
                report.clear()
                print_stats()
            now = time.monotonic()
            due = [q[0][0] for q in queue.values() if q]
            readable, _, _ = select.select([a, b], [], [], max(0.0, min(due) - now) if due else 1.0)
            for fd in readable:
                try:
                    pkt = os.read(fd, 65536)
                except OSError:
                    continue
                now = time.monotonic()
                if method == "rtp":
                    kind, value, rexmit = rtp_header(pkt) or (None, 0, False)
                    if kind == "data":  # seen before: a retransmission
                        rexmit = (fd, value) in rtp_passed
                        rtp_passed.add((fd, value))
                else:
                    kind, value, rexmit = srt_header(pkt) or (None, 0, False)
                if prime and fd == b and kind == "data":
                    prime.clear()
                    continue
                if lossy:
                    if not loss_began[0]:
                        loss_began[0] = now
                    if fd in last_from and now - last_from[fd] > silence[fd][0]:
                        silence[fd] = (now - last_from[fd], last_from[fd] - loss_began[0])
                    last_from[fd] = now
                    seen[fd] += 1
                    nak = kind == "control" and value == SRT_NAK
                    n["rexmit"] += rexmit
                    n["nak"] += nak
                    drop = not ((rexmit or nak) and method == "first") and rng.random() < loss
                    for seq in nak_sequences(pkt) if nak else ():
                        if seq in nak_last:
                            nak_gaps.append(now - nak_last[seq])
                        nak_last[seq] = now
                        if (other[fd], seq) in trace:
                            trace[(other[fd], seq)].append((now, "NAK lost" if drop else "NAK"))
                    if method == "rtp" and kind == "control":  # which RTCP packet is a NACK, SRTCP hides
                        for key, story in trace.items():
                            if key[0] == other[fd] and len(story) < 10:
                                story.append((now, "RTCP lost" if drop else "RTCP"))
                    if kind == "data" and not rexmit and not drop:
                        for key, story in trace.items():  # the packet that shows the receiver the loss
                            if key[0] == fd and len(story) == 1 and (method != "rtp" or key[1][0] == value[0]):
                                story.append((now, "next packet"))
                    if rexmit and (fd, value) in dropped_at:
                        if drop:
                            trace[(fd, value)].append((now, "retransmission lost"))
                        else:
                            if method == "rtp":
                                rtp_repaired.add(value[0])
                            repairs.append(now - dropped_at[(fd, value)])
                            story = trace.pop((fd, value))
                            found = [t for t, e in story if e == "next packet"]
                            waits.append(now - (found[0] if found else story[0][0]))
                            if repairs[-1] >= 0.1:
                                slow.append((story[0][0] - loss_began[0], repairs[-1]))
                            slowest.append((waits[-1], [story[0][0]] +
                                            [(1000 * (t - story[0][0]), e) for t, e in story] +
                                            [(1000 * repairs[-1], "retransmission")]))
                            slowest.sort(reverse=True)
                            del slowest[3:], dropped_at[(fd, value)]
                    if drop:
                        lost[fd] += 1
                        n["rexmit_lost"] += rexmit
                        n["nak_lost"] += nak
                        if kind == "data" and (fd, value) not in dropped_at:
                            dropped_at[(fd, value)] = now
                            trace[(fd, value)] = [(now, "dropped")]
                        continue
                queue[fd].append((now + delay_s, pkt))
            now = time.monotonic()
            for fd, q in queue.items():
                while q and q[0][0] <= now:
                    late[0] = max(late[0], (now - q[0][0]) * 1000)
                    try:
                        os.write(other[fd], q.popleft()[1])
                    except OSError:  # that end is down: the packet is lost
                        pass
    finally:
        print_stats()


def run_watch(cpu):
    """A stall watch on one CPU (this file run as `srt_loss_tools.py --watch CPU`): at the highest
    real-time priority there, it sleeps 5 ms again and again and on SIGTERM prints how much later
    than asked it ever woke (and when: seconds after the SIGUSR1 that marks the loss's start), and
    the count of wake-ups 50 ms or more late. A late wake-up at that
    priority is the CPU itself gone (the hypervisor ran another guest's vCPU on it) or the kernel
    not yielding it: a stall that no process of the test could have been spared."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    os.sched_setaffinity(0, {cpu})
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(os.sched_get_priority_max(os.SCHED_FIFO)))
    except OSError:
        pass
    began = [time.monotonic()]  # from SIGUSR1 on: the loss's start
    signal.signal(signal.SIGUSR1, lambda *_: began.__setitem__(0, time.monotonic()))
    worst, over_50ms, worst_at = 0.0, 0, 0.0
    try:
        while True:
            t = time.monotonic()
            time.sleep(0.005)
            late = time.monotonic() - t - 0.005
            if late >= 0.05:
                over_50ms += 1
            if late > worst:
                worst, worst_at = late, t - began[0]
    finally:
        print(f"watch cpu={cpu} stall_ms={round(worst * 1000)} stall_at_s={worst_at:.1f} stalls_50ms={over_50ms}",
              flush=True)


if __name__ == "__main__" and sys.argv[1:2] == ["--watch"]:
    run_watch(int(sys.argv[2]))
    sys.exit(0)

if __name__ == "__main__" and sys.argv[1:2] == ["--link"]:
    run_link(sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6]), sys.argv[7])
    sys.exit(0)


# ---- the namespace ----

def ip(*args, check_rc=True):
    p = subprocess.run(["ip"] + list(args), capture_output=True, text=True, timeout=10)
    if check_rc and p.returncode != 0:
        fail(f"ip {' '.join(args)}: {p.stderr.strip()}")
    return p


def remove_stale_namespaces():
    """Namespaces an earlier run left behind when it was killed (its pid is in the name)."""
    for line in ip("netns", "list", check_rc=False).stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        if not name.startswith(NS_PREFIX) or not name[len(NS_PREFIX):].isdigit():
            continue
        try:
            os.kill(int(name[len(NS_PREFIX):]), 0)
        except ProcessLookupError:
            ip("netns", "del", name, check_rc=False)
        except OSError:
            pass


class LossyLink:
    """A namespace joined to the root one by the --link child; removed by down() (also at exit)."""

    def __init__(self, loss, delay_s, method):
        pid = os.getpid()
        self.ns = f"{NS_PREFIX}{pid}"
        self.root_dev, self.ns_dev = f"slr{pid}", f"sln{pid}"
        a, b = 200 + pid % 50, (pid // 50) % 250
        self.root_ip, self.ns_ip = f"10.{a}.{b}.1", f"10.{a}.{b}.2"
        self.loss, self.delay_s, self.method = loss, delay_s, method
        self.seed = random.randrange(1 << 30)
        self.proc = None
        self.stats = {}
        self.slow = []  # the link's stories of its slowest repairs
        self.watches = []  # a stall watch per CPU
        self.stalls = []  # what each watch saw: "watch cpu=N stall_ms=..."

    def up(self):
        atexit.register(self.down)
        ip("netns", "add", self.ns)
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--link", self.root_dev, self.ns_dev,
                                      str(self.loss), str(self.delay_s), str(self.seed), self.method],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ready, _, _ = select.select([self.proc.stdout], [], [], 10)
        line = self.proc.stdout.readline() if ready else ""
        if line.strip() != "ready":
            fail(f"the link process did not start: {line!r} {self.proc.stderr.read() if self.proc.poll() else ''}")
        self.watches = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--watch", str(cpu)],
                                         stdout=subprocess.PIPE, text=True) for cpu in sorted(os.sched_getaffinity(0))]
        ip("link", "set", self.ns_dev, "netns", self.ns)
        ip("addr", "add", self.root_ip + "/30", "dev", self.root_dev)
        ip("link", "set", self.root_dev, "up")
        ip("-n", self.ns, "addr", "add", self.ns_ip + "/30", "dev", self.ns_dev)
        ip("-n", self.ns, "link", "set", self.ns_dev, "up")
        ip("-n", self.ns, "link", "set", "lo", "up")
        print(f"link: {self.ns} {self.ns_ip} <-> {self.root_ip}, {self.delay_s * 1000:.0f} ms each way "
              f"(loss {self.loss:.0%} each way once started, method {self.method}; seed {self.seed})", flush=True)
        return self

    def drop_one_srt_packet(self):
        self.proc.send_signal(signal.SIGUSR2)

    def start_loss(self):
        self.proc.send_signal(signal.SIGUSR1)
        for w in self.watches:  # their times from now on
            w.send_signal(signal.SIGUSR1)

    def stop_loss(self):
        """Stops the loss; reads the link's figures so far."""
        self.proc.send_signal(signal.SIGHUP)
        # The link prints its lines at once, the figures last: once the first is there, read on to
        # those (not select() again: the first readline() may have buffered them all).
        if select.select([self.proc.stdout], [], [], 5)[0]:
            for line in iter(self.proc.stdout.readline, ""):
                self.read_stats(line)
                if line.startswith("stats "):
                    break

    def read_stats(self, line):
        """Reads a line of the link's: its figures, or the story of one of its slowest repairs."""
        if line.startswith("stats "):
            self.stats = {k: int(v) for k, v in (w.split("=") for w in line.split()[1:])}
        elif line.startswith(("slow repair", "nak gaps", "repairs over")) and line.strip() not in self.slow:
            self.slow.append(line.strip())

    def summary(self):
        s = self.stats
        return (f"to the namespace {s.get('to_ns')} packets, {s.get('to_ns_lost')} dropped; from it "
                f"{s.get('from_ns')}, {s.get('from_ns_lost')} dropped; retransmissions {s.get('rexmit')} "
                f"({s.get('rexmit_lost')} dropped); "
                f"NAKs {s.get('naks')} ({s.get('naks_lost')} dropped); dropped data packets repaired "
                f"{s.get('repaired')} (unrepaired {s.get('unrepaired')}) in p50 {s.get('repair_p50_ms')} / p99 "
                f"{s.get('repair_p99_ms')} / max {s.get('repair_max_ms')} ms after the drop, p50 "
                f"{s.get('wait_p50_ms')} / max {s.get('wait_max_ms')} ms after the packet that showed the loss; a "
                f"packet named again by a NAK "
                f"{s.get('nak_repeats')} times, after p50 {s.get('nak_gap_p50_ms')} ms "
                f"(min {s.get('nak_gap_min_ms')}); "
                f"the server's longest silence {s.get('server_silence_ms')} ms ({s.get('server_silence_at_s')} s into "
                f"the loss), the publisher's {s.get('publisher_silence_ms')} ms ({s.get('publisher_silence_at_s')} s); "
                f"a packet at most {s.get('late_ms')} ms late")

    def worst_stall_ms(self):
        """The longest any CPU was gone, by the stall watches (after down())."""
        return max((int(w.split("stall_ms=")[1].split()[0]) for w in self.stalls), default=None)

    def down(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                out, _ = self.proc.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                out, _ = self.proc.communicate()
            for line in out.splitlines():
                self.read_stats(line)
        for w in self.watches:
            if w.poll() is None:
                w.terminate()
            out = w.communicate(timeout=5)[0]
            self.stalls += [line.strip() for line in out.splitlines() if line.startswith("watch")]
        self.watches = []
        ip("netns", "del", self.ns, check_rc=False)


# ---- the server, the source, the figures ----

def udp_port(host):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def publisher_row(hport, protocol):
    """The publisher's row of /api/v1/clients (SRT or RTMP), or None."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{hport}/api/v1/clients", timeout=5) as r:
            rows = json.loads(r.read())
    except (OSError, ValueError):
        return None
    pubs = [r for r in rows if r.get("protocol") == protocol and r.get("publishing")]
    return pubs[0] if len(pubs) == 1 else None


def server_real_time(pid):
    """Every thread of the server at a real-time priority: libsrt's (named SRT:...) at SCHED_RR 2,
    the others (the loops, the SrtPoller) at SCHED_RR 1; a thread started later inherits its
    starter's (libsrt's receiving thread starts each connection's TSBPD thread)."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                prio = 2 if f.read().startswith("SRT:") else 1
            os.sched_setscheduler(int(tid), os.SCHED_RR, os.sched_param(prio))
        except OSError:
            pass


def thread_waits(pids):
    """{thread: (ms run, ms waited on a runqueue)} of the processes' threads so far (schedstat)."""
    out = {}
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/comm") as f:
                    comm = f.read().strip()
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    ran, waited = (int(x) / 1e6 for x in f.read().split()[:2])
            except (OSError, ValueError):
                continue
            out[f"{comm}/{tid}"] = (ran, waited)
    return out


def ksoftirqd_pids():
    """The kernel's softirq threads (a packet's delivery may wait for one)."""
    pids = []
    for p in os.listdir("/proc"):
        try:
            if p.isdigit() and open(f"/proc/{p}/comm").read().startswith("ksoftirqd"):
                pids.append(p)
        except OSError:  # a process that has just ended
            pass
    return pids


def make_source(path, seconds):
    """H.264 (a keyframe every GOP frames, no B-frames) and AAC in an FLV."""
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y",
                    "-f", "lavfi", "-i", f"testsrc2=size=320x240:rate={FPS}",
                    "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100", "-t", str(seconds),
                    "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-bf", "0", "-g", str(GOP),
                    "-keyint_min", str(GOP), "-sc_threshold", "0", "-b:v", "500k", "-pix_fmt", "yuv420p",
                    "-c:a", "aac", "-b:a", "64k", "-f", "flv", path], check=True, timeout=120)
    return path


def frames(tags):
    """The video frames [(timestamp, md5, keyframe)] and AAC frames [(timestamp, md5)] of an FLV's
    tags: no sequence headers, no end-of-sequence tag (ffmpeg's FLV muxer writes one at the end)."""
    video = [(ts, md5, (head[0] >> 4) == 1) for t, ts, md5, size, head in tags
             if t == 9 and (head[0] & 0x0F) == 7 and head[1] == 1]
    audio = [(ts, md5) for t, ts, md5, size, head in tags if t == 8 and (head[0] >> 4) == 10 and head[1] == 1]
    return video, audio


def audio_pes_span_ms(src, ts_path):
    """The longest span of audio one PES holds when ffmpeg muxes src into MPEG-TS as the
    publisher does (`-c copy -f mpegts`: several AAC frames a PES), from the PES timestamps."""
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", src, "-c", "copy", "-f", "mpegts", ts_path],
                   check=True, timeout=60)
    data, starts = open(ts_path, "rb").read(), []
    for off in range(0, len(data) - 187, 188):
        p = data[off:off + 188]
        pos = 4 + (1 + p[4] if p[3] & 0x20 else 0)
        if ((p[1] & 0x1F) << 8) | p[2] == TS_AUDIO_PID and p[1] & 0x40 and p[pos:pos + 3] == b"\x00\x00\x01":
            b = p[pos + 9:pos + 14]
            starts.append((((b[0] >> 1) & 7) << 30 | b[1] << 22 | (b[2] >> 1) << 15 | b[3] << 7 | b[4] >> 1) / 90.0)
    if len(starts) < 2:
        fail(f"no audio PES in {ts_path}")
    return max(b - a for a, b in zip(starts, starts[1:]))


def require_loss_setup():
    """What a run needs: root, the tools, TUN, an ffmpeg with SRT (skip() otherwise: a failure in CI)."""
    if os.geteuid() != 0:
        skip("needs root: network namespaces and TUN devices")
    require_tools("ffmpeg", "ip", "chrt")
    if not os.path.exists("/dev/net/tun"):
        skip("no /dev/net/tun")
    if "srt" not in subprocess.run(["ffmpeg", "-hide_banner", "-protocols"], capture_output=True,
                                   text=True).stdout.split():
        skip("this ffmpeg has no SRT protocol (libsrt)")


Session = collections.namedtuple("Session", "name protocol conn_id rows out probe_lines")


class LossRun:
    """The link, the server (SRT on the link, RTMP and HTTP on 127.0.0.1; RTMP on the link too when
    rtmp_on_link) and the source; publisher sessions through the link; the checks."""

    def __init__(self, name, method, rtmp_on_link=False):
        require_loss_setup()
        remove_stale_namespaces()
        self.started = time.time()
        self.procs = []  # every publisher and player, stopped in the end whatever happened
        self.server = None
        self.link = LossyLink(LOSS, DELAY_S, method).up()
        self.srt_port, self.hport = udp_port(self.link.root_ip), free_port()
        # log.level debug: libsrt's own lines (notices, warnings: a drop says why) are in the log.
        self.server = Server(name, log_level="debug",
                             extra_yaml=(f"srt:\n  listen: {self.link.root_ip}:{self.srt_port}\n"
                                         f"  latency: {LATENCY_MS}ms\nhttp:\n  listen: 127.0.0.1:{self.hport}\n"))
        if rtmp_on_link:
            with open(self.server.config) as f:
                cfg = f.read()
            with open(self.server.config, "w") as f:
                port = self.server.port
                f.write(cfg.replace(f"listen: 127.0.0.1:{port}\n",
                                    f"listen: [127.0.0.1:{port}, {self.link.root_ip}:{port}]\n", 1))
        self.src = make_source(os.path.join(self.server.dir, "src.flv"), SECONDS + 1)
        self.src_video, self.src_audio = frames(flv_tags(self.src))
        self.audio_pes_ms = audio_pes_span_ms(self.src, os.path.join(self.server.dir, "src.ts"))
        self.cpu_from = self.cpu_seconds()  # past the encode: what the run itself costs
        check(len(self.src_video) == (SECONDS + 1) * FPS and
              all(k == (i % GOP == 0) for i, (_, _, k) in enumerate(self.src_video)),
              f"source: {len(self.src_video)} video frames, a keyframe every {GOP}")
        self.server.start()
        check(wait_for(lambda: "event=srt_listening" in self.server.log_text(), 10),
              "server listens for SRT on the link")
        server_real_time(self.server.proc.pid)
        check(wait_port(self.hport), "HTTP listener is up")

    def srt_close_lines(self, conn_id):
        return [line for line in self.server.log_text().splitlines()
                if f"conn={conn_id} " in line and "event=srt_close" in line]

    def session(self, n, protocol="srt", probe=False):
        """One publisher's run of live/camN over SRT (or RTMP): clean link, for SRT the first loss
        alone once libsrt measured the round trip, then the loss; a player joins (an rtmp-probe
        too when `probe`: arrival times). Returns a Session: the connection id, its
        /api/v1/clients rows [(s under loss, row)], the player's file, the probe's lines."""
        name = f"cam{n}"
        link, server = self.link, self.server
        pub_err = open(os.path.join(server.dir, f"publisher{n}.err"), "w")
        if protocol == "srt":
            url = (f"srt://{link.root_ip}:{self.srt_port}?streamid=publish:live/{name}&latency={LATENCY_MS * 1000}"
                   f"&pkt_size=1316")
            out_format = ["-f", "mpegts", url]
        else:
            out_format = ["-f", "flv", f"rtmp://{link.root_ip}:{server.port}/live/{name}"]
        pub = subprocess.Popen(["chrt", "--rr", "2", "ip", "netns", "exec", link.ns, "ffmpeg", "-nostdin", "-loglevel",
                                "error", "-re", "-i", self.src, "-c", "copy"] + out_format,
                               stdout=subprocess.DEVNULL, stderr=pub_err)
        self.procs.append(pub)
        pub_started = time.time()
        seen = []

        def row():
            r = publisher_row(self.hport, protocol)
            if r is not None and r.get("publishing") == [f"live/{name}"] and (protocol != "srt" or "srt" in r):
                seen.append(r)
                return r.get("srt", {})
            return None

        if protocol == "srt":
            check(wait_for(lambda: row() is not None and seen[-1]["srt"]["rtt_ms"] != 100, 10),
                  f"{name}: the SRT publisher is publishing and libsrt has measured the round trip "
                  f"({seen[-1]['srt']['rtt_ms'] if seen else None} ms)")
            # The connection's first loss, alone on a clean link: after it, libsrt asks again every ~RTT/2.
            link.drop_one_srt_packet()
            check(wait_for(lambda: (row() or {}).get("packets_lost", 0) >= 1, 5),
                  f"{name}: SRT: the first loss, one packet on a clean link")
            time.sleep(0.5)  # past the 200 ms latency: repaired or dropped by now
            figures = row() or {}
            check(figures.get("packets_lost") == 1 and figures.get("packets_dropped") == 0,
                  f"{name}: SRT: ... repaired ({figures})")
        else:
            check(wait_for(lambda: row() is not None, 10), f"{name}: the RTMP publisher is publishing")
        conn_id = seen[-1]["id"]
        watched = [server.proc.pid] + ksoftirqd_pids()
        waits_before = thread_waits(watched)
        link.start_loss()
        loss_started = time.time()
        out = os.path.join(server.dir, f"{name}.flv")
        player = subprocess.Popen(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", server.url(f"live/{name}"), "-c",
                                   "copy", "-f", "flv", out], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(player)
        prober = None
        if probe:  # ends by itself 3 s after the source's end (its output is lost when killed)
            duration = SECONDS + 1 - (loss_started - pub_started) + 3
            prober = AsyncProbe(server.url(f"live/{name}"), ["--duration", f"{duration:.0f}"], duration + 20)

        # The publisher's figures while it runs (the last ones from its final second).
        rows = []
        while pub.poll() is None and time.time() - pub_started < SECONDS + 15:
            r = publisher_row(self.hport, protocol)
            if r is not None and r["id"] == conn_id and (protocol != "srt" or "srt" in r):
                rows.append((round(time.time() - loss_started, 1), r))
            time.sleep(1 if time.time() - pub_started > SECONDS - 5 else 3)
        if pub.poll() is None:
            fail(f"{name}: the publisher did not end within {SECONDS + 15} s")
        link.stop_loss()
        waits = thread_waits(watched)
        waited = sorted(((w[1] - waits_before.get(t, (0, 0))[1], w[0] - waits_before.get(t, (0, 0))[0], t)
                         for t, w in waits.items()), reverse=True)
        print("under loss, threads waited on a runqueue (ms waited / ms ran): " +
              ", ".join(f"{t} {w:.0f}/{r:.0f}" for w, r, t in waited[:8]), flush=True)
        pub_err.close()
        check(pub.returncode == 0, f"{name}: the publisher ran {time.time() - pub_started:.1f} s, "
              f"{time.time() - loss_started:.1f} s of them under loss, and exited 0 "
              f"({pub.returncode}: {open(pub_err.name).read()[-300:]!r})")
        if protocol == "srt":
            check(wait_for(lambda: self.srt_close_lines(conn_id), 10), f"{name}: the server closed the SRT connection")
        time.sleep(2)  # the player has what the server had; it would wait for a next publisher: stop it
        stop_proc(player)
        probe_lines = prober.lines() if prober else None
        return Session(name, protocol, conn_id, rows, out, probe_lines)

    def srt_drops(self, s):
        """The readings of a session's SRT figures with packets dropped: [(s under loss, lost, dropped, rtt ms)]."""
        return [(t, r["srt"]["packets_lost"], r["srt"]["packets_dropped"], r["srt"]["rtt_ms"])
                for t, r in s.rows if r["srt"]["packets_dropped"]]

    def check_srt_figures(self, s):
        """The publisher's SRT figures and close line: lost and retransmitted, never dropped."""
        check(len(s.rows) >= 10, f"{s.name}: read the publisher's SRT figures {len(s.rows)} times during the run")
        dropped = self.srt_drops(s)
        srt = s.rows[-1][1]["srt"]
        print("SRT figures (last): " + json.dumps(srt), flush=True)
        check(srt["packets_received"] > SECONDS * 30, f"SRT: {srt['packets_received']} packets received")
        check(srt["packets_lost"] > 0, f"SRT: {srt['packets_lost']} packets lost on the way (the loss happened)")
        check(srt["packets_retransmitted"] > 0,
              f"SRT: {srt['packets_retransmitted']} packets retransmitted (repaired)")
        check(not dropped, "SRT: no packet dropped (too late) at any reading"
              + (f"; first (s under loss, lost, dropped, rtt ms): {dropped[0]}" if dropped else ""))
        rtt = statistics.median(r["srt"]["rtt_ms"] for _, r in s.rows)
        check(2 * DELAY_S * 1000 - 2 <= rtt <= 2 * DELAY_S * 1000 + 20, f"SRT: round trip {rtt} ms (the link's 40 ms)")
        mpegts = s.rows[-1][1].get("mpegts", {})
        check(mpegts.get("packets", 0) > 0 and mpegts.get("continuity_errors") == 0 and
              mpegts.get("dropped_frames") == 0, f"MPEG-TS: no continuity error, no dropped frame ({mpegts})")
        closes = self.srt_close_lines(s.conn_id)
        check(len(closes) == 1, f"log: the publisher's srt_close line: {closes[0] if closes else None}")
        check("continuity_errors=0 " in closes[0] and "damaged_packets=0" in closes[0],
              "log: no continuity error, no damaged packet")
        return srt

    def check_player(self, s):
        """The player's frames: one contiguous run of the source's from its join through the 60th
        second, timestamps one frame apart, a file that decodes."""
        got, got_audio = frames(flv_tags(s.out))
        src_video, src_audio = self.src_video, self.src_audio
        check(len(got) > 0, f"player: recorded {len(got)} video frames")
        pos = contiguous_in([h for _, h, _ in got], [h for _, h, _ in src_video])
        check(pos >= 0,
              f"player: its {len(got)} video frames are one contiguous run of the source's (from frame {pos})")
        check(got[0][2] and pos % GOP == 0, f"player: the run starts on a keyframe (source frame {pos})")
        end = pos + len(got)
        check(pos <= 2 * GOP and end >= SECONDS * FPS,
              f"player: source frames {pos}..{end - 1}: none missing from the keyframe it joined on through the "
              f"{SECONDS}th second (frame {SECONDS * FPS - 1}; the source has {len(src_video)})")
        steps = collections.Counter(b[0] - a[0] for a, b in zip(got, got[1:]))
        check(set(steps) == {FRAME_MS}, f"player: video timestamps step by one frame, {FRAME_MS} ms ({dict(steps)})")
        offsets = {g[0] - v[0] for g, v in zip(got, src_video[pos:])}
        check(len(offsets) == 1, f"player: video timestamps are the source's plus a constant ({sorted(offsets)[:5]})")
        apos = contiguous_in([h for _, h in got_audio], [h for _, h in src_audio])
        check(apos >= 0,
              f"player: its {len(got_audio)} AAC frames are one contiguous run of the source's (from {apos})")
        a_start, a_end, v_start = src_audio[apos][0], src_audio[apos + len(got_audio) - 1][0], src_video[pos][0]
        # From the join: the GOP cache holds what came after the keyframe, and an audio PES of
        # ffmpeg's MPEG-TS muxer, written whole, holds the audio of up to audio_pes_ms before it.
        check(v_start - self.audio_pes_ms <= a_start <= v_start + AAC_FRAME_MS and
              a_end >= src_video[SECONDS * FPS - 1][0],
              f"player: audio from its join ({a_start} ms; video {v_start} ms; an audio PES spans up to "
              f"{self.audio_pes_ms:.0f} ms) through the {SECONDS}th second ({a_end} ms)")
        dec = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", s.out, "-f", "null", "-"],
                             capture_output=True, text=True, timeout=120)
        check(dec.returncode == 0 and dec.stderr.strip() == "",
              f"player: its file decodes without an error ({dec.returncode}: {dec.stderr[-300:]!r})")

    def arrival_figures(self, s, skip_s=3.0):
        """What the probe saw of the video, past its first skip_s seconds (the GOP cache's burst):
        {frames, gap_max_ms, gaps_over_100ms, gaps_over_250ms, delay_p50/p99/max_ms (each frame's
        arrival minus its timestamp, above the run's fastest frame), late_100ms (frames 100 ms or
        more behind it: what a player with a 100 ms buffer would stall on)}; its payloads must be a
        run of the source's."""
        video = [(ms, int(f["ts"]), f["md5"]) for ms, f, _ in probe_events(s.probe_lines, "video")
                 if f.get("seq") == "0" and int(f["size"]) > 5]  # not the end of sequence (5 bytes)
        src_hashes = [h for _, h, _ in self.src_video]
        pos = contiguous_in([h for _, _, h in video], src_hashes)
        check(pos >= 0, f"{s.name}: the probe's {len(video)} video payloads are one contiguous run of the source's")
        steady = [(ms, ts) for ms, ts, _ in video if ms >= skip_s * 1000]
        gaps = sorted(b[0] - a[0] for a, b in zip(steady, steady[1:]))
        delay = [ms - ts for ms, ts in steady]
        floor = min(delay)
        above = sorted(d - floor for d in delay)
        return {"frames": len(steady), "gap_max_ms": gaps[-1], "gaps_over_100ms": sum(g > 100 for g in gaps),
                "gaps_over_250ms": sum(g > 250 for g in gaps), "delay_p50_ms": above[len(above) // 2],
                "delay_p99_ms": above[len(above) * 99 // 100], "delay_max_ms": above[-1],
                "late_100ms": sum(d >= 100 for d in above)}

    def close(self):
        """Stops everything (after a failure too); returns the server's exit code."""
        for p in self.procs:
            stop_proc(p)
        rc = None
        if self.server is not None and self.server.proc is not None:
            rc = self.server.stop()
        self.link.down()
        print("link under loss: " + self.link.summary(), flush=True)
        for line in self.link.slow + self.link.stalls:
            print("link: " + line, flush=True)
        return rc

    def cpu_seconds(self):
        """CPU-seconds of this process and its waited-for children so far (after close(): the
        server, the publishers, the players, the link)."""
        return sum(ru.ru_utime + ru.ru_stime for ru in (resource.getrusage(resource.RUSAGE_CHILDREN),
                                                         resource.getrusage(resource.RUSAGE_SELF)))

    def check_link(self, rc):
        s = self.link.stats
        check(rc == 0, f"server exited 0 on SIGTERM (got {rc})")
        check(s.get("from_ns", 0) > SECONDS * 30 and s.get("from_ns_lost", 0) > s["from_ns"] * LOSS / 2
              and s.get("to_ns_lost", 0) > 0, "link: it dropped packets both ways, at about the rate asked")
