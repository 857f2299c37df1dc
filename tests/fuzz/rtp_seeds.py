#!/usr/bin/python3
"""Writes tests/fuzz/corpus/rtp_depacketizer/ and tests/fuzz/corpus/rtcp/.

rtp_depacketizer: RTP packets as real senders make them, in the framing
tests/fuzz/rtp_depacketizer_fuzz.cpp reads (a mode byte, then each packet behind a 2-byte length,
and a byte of milliseconds when the mode goes through the reorder buffer): ffmpeg's RTP muxer
(`-f rtp`, H.264 from libx264 with single NAL units, STAP-A and FU-A, and Opus from libopus),
captured on a UDP socket here, and GStreamer's rtph264pay and rtpopuspay (each RTP buffer a file
of multifilesink). Some go straight, some through the reorder buffer with neighbours swapped.

rtcp: the sender reports ffmpeg sends beside its RTP (SR + SDES, captured on the RTCP port), and
compounds written here as a browser's receiver sends them (RR + REMB, generic NACK, PLI, FIR,
transport-wide feedback, BYE, padding), since a browser's own RTCP only travels encrypted.

Needs ffmpeg (libx264, libopus) and gst-launch-1.0 with x264enc, rtph264pay, opusenc, rtpopuspay."""
import glob
import os
import socket
import struct
import subprocess
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
RTP_OUT = os.path.join(HERE, "corpus", "rtp_depacketizer")
RTCP_OUT = os.path.join(HERE, "corpus", "rtcp")
MAX_SEED = 6000  # bytes of packets per seed


def udp_socket():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    s.settimeout(0.5)
    return s


def ffmpeg_rtp(args):
    """The RTP and RTCP datagrams ffmpeg sends for `args` (its input and codec options)."""
    rtp, rtcp = udp_socket(), udp_socket()
    got = {"rtp": [], "rtcp": []}

    def read(sock, key):
        while True:
            try:
                got[key].append(sock.recv(65536))
            except socket.timeout:
                if done.is_set():
                    return

    done = threading.Event()
    readers = [threading.Thread(target=read, args=(rtp, "rtp")), threading.Thread(target=read, args=(rtcp, "rtcp"))]
    for t in readers:
        t.start()
    url = f"rtp://127.0.0.1:{rtp.getsockname()[1]}?rtcpport={rtcp.getsockname()[1]}"
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-re"] + args + ["-f", "rtp", url],
                   check=True, timeout=60, stdout=subprocess.DEVNULL)
    done.set()
    for t in readers:
        t.join()
    return got["rtp"], got["rtcp"]


def gstreamer_rtp(pipeline):
    """Each RTP buffer the pipeline (ending in a payloader) gives, in order."""
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["gst-launch-1.0", "-q"] + pipeline + ["!", "multifilesink", f"location={d}/%05d"],
                       check=True, timeout=60)
        return [open(f, "rb").read() for f in sorted(glob.glob(os.path.join(d, "*")))]


def rtp_seed(name, mode, packets, reorder=False):
    out = bytearray([mode | (2 if reorder else 0)])
    order = list(range(len(packets)))
    if reorder:  # swap every third pair of neighbours
        for i in range(1, len(order) - 1, 3):
            order[i], order[i + 1] = order[i + 1], order[i]
    for n, i in enumerate(order):
        p = packets[i]
        if len(out) + len(p) + 3 > MAX_SEED and n > 0:
            break
        out += struct.pack(">H", len(p))
        if reorder:
            out.append(7)
        out += p
    with open(os.path.join(RTP_OUT, name), "wb") as f:
        f.write(bytes(out))


def rtcp_header(count, ptype, body, padding=0):
    body = body + b"\0" * (-len(body) % 4)
    if padding:
        body = body + b"\0" * (padding - 1) + bytes([padding])
    return struct.pack(">BBH", 0x80 | (0x20 if padding else 0) | count, ptype, (len(body) + 4) // 4 - 1) + body


def report_block(ssrc, lost=2, highest=70000):
    return struct.pack(">IB", ssrc, 12) + (lost & 0xFFFFFF).to_bytes(3, "big") + struct.pack(">IIII", highest, 40,
                                                                                             0x12345678, 6554)


def rtcp_seeds(ffmpeg_rtcp):
    for i, p in enumerate(ffmpeg_rtcp[:3]):
        write(RTCP_OUT, f"ffmpeg_sr_{i}", p)
    me, media = 0x11111111, 0x22222222
    rr = rtcp_header(1, 201, struct.pack(">I", me) + report_block(media))
    remb = rtcp_header(15, 206, struct.pack(">II", me, 0) + b"REMB" + bytes([1]) + ((4 << 18) | 156250).to_bytes(3, "big") +
                       struct.pack(">I", media))
    nack = rtcp_header(1, 205, struct.pack(">IIHHHH", me, media, 65530, 0x8005, 20, 0))
    pli = rtcp_header(1, 206, struct.pack(">II", me, media))
    fir = rtcp_header(4, 206, struct.pack(">IIIB", me, 0, media, 3) + b"\0\0\0")
    twcc = rtcp_header(15, 205, struct.pack(">IIHH", me, media, 100, 5) + (0xFFFFFE).to_bytes(3, "big") + bytes([9]) +
                       struct.pack(">HH", 0x2005, 0) + bytes([4, 4, 4, 4, 4]))
    sdes = rtcp_header(1, 202, struct.pack(">I", me) + bytes([1, 6]) + b"sluice" + b"\0")
    bye = rtcp_header(2, 203, struct.pack(">II", me, media) + bytes([4]) + b"gone")
    write(RTCP_OUT, "browser_rr_remb", rr + remb)
    write(RTCP_OUT, "browser_feedback", rr + nack + pli + twcc)
    write(RTCP_OUT, "fir_sdes_bye", fir + sdes + bye)
    write(RTCP_OUT, "padded_rr", rtcp_header(0, 201, struct.pack(">I", me), padding=4))
    write(RTCP_OUT, "app_and_unknown", rtcp_header(0, 204, struct.pack(">I", me) + b"name" + b"data") +
          rtcp_header(0, 210, b"\0\0\0\0"))


def write(folder, name, data):
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def main():
    os.makedirs(RTP_OUT, exist_ok=True)
    os.makedirs(RTCP_OUT, exist_ok=True)
    video = ["-f", "lavfi", "-i", "testsrc=size=96x64:rate=10:duration=0.5", "-c:v", "libx264", "-preset", "ultrafast",
             "-bf", "0", "-g", "4", "-pkt_size", "200"]
    h264, sr = ffmpeg_rtp(video)
    rtp_seed("ffmpeg_h264", 0, h264)
    rtp_seed("ffmpeg_h264_reordered", 4 << 2, h264, reorder=True)
    sliced, _ = ffmpeg_rtp(video[:-2] + ["-x264-params", "slices=2:aud=1", "-pkt_size", "400"])
    rtp_seed("ffmpeg_h264_slices", 10 << 2, sliced)
    opus, _ = ffmpeg_rtp(["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=0.3", "-c:a", "libopus",
                          "-b:a", "16k"])
    rtp_seed("ffmpeg_opus", 1, opus)
    rtp_seed("ffmpeg_opus_reordered", 1, opus, reorder=True)
    gst_h264 = gstreamer_rtp(["videotestsrc", "num-buffers=6", "!", "video/x-raw,width=96,height=64,framerate=10/1", "!",
                              "x264enc", "tune=zerolatency", "key-int-max=3", "!", "rtph264pay", "mtu=300",
                              "config-interval=-1", "aggregate-mode=zero-latency"])
    rtp_seed("gstreamer_h264", 6 << 2, gst_h264)
    gst_opus = gstreamer_rtp(["audiotestsrc", "num-buffers=10", "!", "audioconvert", "!", "opusenc", "!", "rtpopuspay"])
    rtp_seed("gstreamer_opus", 1, gst_opus)
    rtcp_seeds(sr)


if __name__ == "__main__":
    main()
