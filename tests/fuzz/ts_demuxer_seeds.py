#!/usr/bin/python3
"""Writes tests/fuzz/corpus/ts_demuxer/: short MPEG-TS streams as the SRT publishers send them
(ffmpeg's mpegts muxer: H.264 + AAC, HEVC + AAC, H.264 + MP3; GStreamer's mpegtsmux: H.264 + AAC),
each behind the first byte tests/fuzz/ts_demuxer_fuzz.cpp reads as its piece size. Needs ffmpeg
(libx264, libx265, libmp3lame) and gst-launch-1.0 with x264enc, avenc_aac and mpegtsmux."""
import os
import subprocess
import tempfile

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "ts_demuxer")
SRC = ["-f", "lavfi", "-i", "testsrc=size=160x120:rate=25:duration=0.4",
       "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=0.4"]


def ffmpeg(name, video, audio, piece):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "out.ts")
        subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y"] + SRC + video + audio + ["-f", "mpegts", path],
                       check=True, timeout=60)
        write(name, piece, open(path, "rb").read())


def gstreamer(name, piece):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "out.ts")
        subprocess.run(["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=10", "!",
                        "video/x-raw,width=160,height=120,framerate=25/1", "!", "x264enc", "tune=zerolatency",
                        "key-int-max=5", "!", "h264parse", "!", "mux.", "audiotestsrc", "num-buffers=10", "!",
                        "audioconvert", "!", "avenc_aac", "!", "aacparse", "!", "mux.", "mpegtsmux", "name=mux",
                        "!", "filesink", f"location={path}"], check=True, timeout=60)
        write(name, piece, open(path, "rb").read())


def write(name, piece, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(bytes([piece]) + data)


def main():
    os.makedirs(OUT, exist_ok=True)
    x264 = ["-c:v", "libx264", "-preset", "ultrafast", "-g", "5", "-b:v", "50k"]
    ffmpeg("ffmpeg_h264_aac", x264, ["-c:a", "aac", "-b:a", "32k"], 0)
    ffmpeg("ffmpeg_h264_aac_bframes", ["-c:v", "libx264", "-preset", "fast", "-bf", "2", "-g", "5", "-b:v", "50k"],
           ["-c:a", "aac", "-b:a", "32k"], 188)
    ffmpeg("ffmpeg_hevc_aac", ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error:keyint=5",
                               "-b:v", "50k"], ["-c:a", "aac", "-b:a", "32k"], 255)
    ffmpeg("ffmpeg_h264_mp3", x264, ["-c:a", "libmp3lame", "-b:a", "32k"], 100)
    gstreamer("gstreamer_h264_aac", 0)


if __name__ == "__main__":
    main()
