"""What the takeover tests share (docs/live.md, "A second publisher of the same name"): sources
told apart by picture and tone, and the check that a player's capture is a run of one source's
video packets, then the next one's, byte for byte, never interleaved."""
import json
import subprocess
import urllib.request

from common import check, contiguous_in, flv_tags


def make_source(path, size, tone, pattern="testsrc", seconds=40):
    """H.264/AAC FLV, a keyframe every 2 s (50 frames at 25 fps): its picture and tone tell it apart."""
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y",
                    "-f", "lavfi", "-i", f"{pattern}=size={size}:rate=25:duration={seconds}",
                    "-f", "lavfi", "-i", f"sine=frequency={tone}:sample_rate=44100:duration={seconds}",
                    "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "50", "-keyint_min", "50",
                    "-sc_threshold", "0", "-b:v", "300k", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "64k",
                    "-f", "flv", path], check=True, timeout=120)
    return path


def stream_info(http_port, name):
    """The stream's entry in /api/v1/streams (its publisher, takeovers), None when it is not there."""
    with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/api/v1/streams", timeout=5) as r:
        streams = json.loads(r.read())
    for s in streams if isinstance(streams, list) else streams.get("streams", []):
        if s.get("name") == name:
            return s
    return None


def video_payloads(tags):
    """md5 of every video packet that is not a sequence header, in order."""
    return [md5 for t, ts, md5, size, head in tags if t == 9 and not ((head[0] & 0x0F) == 7 and head[1] == 0)]


def capture_video(path):
    """(timestamp, md5) of every video packet of an FLV capture that is not a sequence header."""
    return [(ts, md5) for t, ts, md5, size, head in flv_tags(path)
            if t == 9 and not ((head[0] & 0x0F) == 7 and head[1] == 0)]


class Sources:
    """paths: label -> FLV file. Knows which source each video packet is from."""

    def __init__(self, paths):
        self.paths = paths
        self.video = {k: video_payloads(flv_tags(p)) for k, p in paths.items()}
        self.owner_of = {}
        for k, md5s in self.video.items():
            for m in md5s:
                self.owner_of.setdefault(m, k)
        self.keyframes = {k: {md5 for t, ts, md5, size, head in flv_tags(p) if t == 9 and (head[0] >> 4) == 1
                              and head[1] == 1} for k, p in paths.items()}

    def check_runs(self, name, md5s, stamps, expected, min_run=20):
        """md5s: a player's video payloads in order; expected: the sources it must show, in order."""
        labels = [self.owner_of.get(m, "?") for m in md5s]
        check("?" not in labels, f"{name}: every video packet is one of a source's ({labels.count('?')} are not)")
        runs = []
        for i, label in enumerate(labels):
            if not runs or runs[-1][0] != label:
                runs.append((label, i))
        check([r[0] for r in runs] == expected, f"{name}: runs of {expected}, in that order, never interleaved "
              f"(got {[r[0] for r in runs]})")
        for n, (label, start) in enumerate(runs):
            end = runs[n + 1][1] if n + 1 < len(runs) else len(md5s)
            run = md5s[start:end]
            check(len(run) >= min_run, f"{name}: {len(run)} packets of {label} (>= {min_run})")
            check(contiguous_in(run, self.video[label]) >= 0, f"{name}: {label}'s packets are a contiguous run of it")
            if n > 0:
                check(run[0] in self.keyframes[label], f"{name}: {label}'s run starts on a keyframe")
        check(all(b >= a for a, b in zip(stamps, stamps[1:])), f"{name}: video timestamps keep rising")
