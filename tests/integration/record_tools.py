"""What the recording tests check of a finished FLV recording (docs/recording.md, "Recording files")."""
import struct
import subprocess

from common import check, flv_tag_bodies, flv_tags, media_runs


def amf0_array_after(data, key):
    """The strict array of numbers after the AMF0 property `key` in a script tag."""
    k = struct.pack(">H", len(key)) + key.encode()
    i = data.find(k)
    if i < 0 or data[i + len(k)] != 0x0A:
        return None
    n = struct.unpack(">I", data[i + len(k) + 1:i + len(k) + 5])[0]
    out, p = [], i + len(k) + 5
    for _ in range(n):
        assert data[p] == 0
        out.append(struct.unpack(">d", data[p + 1:p + 9])[0])
        p += 9
    return out


def amf0_number_after(data, key):
    k = struct.pack(">H", len(key)) + key.encode()
    i = data.find(k)
    if i < 0 or data[i + len(k)] != 0:
        return None
    return struct.unpack(">d", data[i + len(k) + 1:i + len(k) + 9])[0]


def check_recording(name, path, source_tags, exact=True):
    data = open(path, "rb").read()
    tags = flv_tags(path)
    check(tags and tags[0][0] == 18, f"{name}: the first tag is onMetaData")
    meta = flv_tag_bodies(path)[0][2]
    size = amf0_number_after(meta, "filesize")
    check(size == len(data), f"{name}: onMetaData filesize is the file's size ({size} vs {len(data)})")
    positions = amf0_array_after(meta, "filepositions")
    times = amf0_array_after(meta, "times")
    check(positions and times and len(positions) == len(times), f"{name}: a keyframes index ({len(positions or [])})")
    ok = all(data[int(p)] == 9 and (data[int(p) + 11] >> 4) == 1 for p in positions)
    check(ok, f"{name}: every filepositions entry points at a video keyframe tag")
    got, want = media_runs(tags), media_runs(source_tags)
    if exact:
        for t, label in ((9, "video"), (8, "audio")):
            check(got[t] == want[t], f"{name}: every {label} packet recorded unchanged ({len(got[t])} of {len(want[t])})")
        stamps = [(tg[0], tg[1]) for tg in tags if tg[0] in (8, 9) and not (tg[0] == 9 and tg[4][1] == 0)]
        src_stamps = [(tg[0], tg[1]) for tg in source_tags if tg[0] in (8, 9) and not (tg[0] == 9 and tg[4][1] == 0)]
        check(stamps == src_stamps, f"{name}: timestamps equal the published ones")
    dur = float(subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path],
                               capture_output=True, text=True).stdout.strip() or 0)
    meta_dur = amf0_number_after(meta, "duration")
    last = max(tg[1] for tg in tags if tg[0] in (8, 9)) / 1000.0
    check(abs(meta_dur - last) <= 0.041, f"{name}: onMetaData duration {meta_dur:.3f} s = last timestamp {last:.3f} s")
    check(abs(dur - last) <= 0.1, f"{name}: ffprobe reads the duration ({dur:.3f} s)")
    return tags
