"""HLS helpers for Sluice's integration tests: a playlist parser and RFC 8216 / 8216bis (LL-HLS)
checker, MPEG-TS and fMP4 demuxers that report what is malformed, and a live (LL-)HLS reader.

Standard library only. Run this file to self-test it (uses ffmpeg/ffprobe when present).
"""
import http.client
import re
import ssl
import threading
import time
import urllib.parse

# ------------------------------------------------------------------------------------ playlists

ATTR_RE = re.compile(r'([A-Z0-9-]+)=("[^"]*"|[^,]*)')
PDT_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
PART_NAME_RE = re.compile(r"part(\d+)\.(\d+)\.[A-Za-z0-9]+(\?|$)")


def parse_attrs(text):
    """An attribute list (RFC 8216 4.2) as a dict of strings; quoted strings lose their quotes."""
    return {k: v[1:-1] if v.startswith('"') else v for k, v in ATTR_RE.findall(text)}


def parse_playlist(text):
    """A media playlist as a dict: header values, "segments" (complete segments, each with msn,
    duration, uri, discontinuity, program_date_time, map, parts), "trailing_parts" (parts of the
    segment being written, msn "next_msn"), "preload_hint", and "errors" for unparsable lines."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    pl = {"extm3u": bool(lines) and lines[0] == "#EXTM3U", "version": None, "target_duration": None,
          "target_duration_count": 0, "media_sequence": 0, "discontinuity_sequence": 0, "server_control": {},
          "part_inf": None, "skip": None, "preload_hint": None, "maps": [], "endlist": False,
          "i_frames_only": False, "float_extinf": False, "segments": [], "trailing_parts": [], "errors": []}
    pending = {"duration": None, "discontinuity": False, "program_date_time": None, "parts": []}
    cur_map = None
    for line in lines[1:] if pl["extm3u"] else lines:
        if not line.startswith("#"):
            if pending["duration"] is None:
                pl["errors"].append(f"segment URI without EXTINF: {line}")
            pl["segments"].append(dict(pending, uri=line, map=cur_map))
            pending = {"duration": None, "discontinuity": False, "program_date_time": None, "parts": []}
            continue
        tag, _, value = line.partition(":")
        try:
            if tag == "#EXT-X-VERSION":
                pl["version"] = int(value)
            elif tag == "#EXT-X-TARGETDURATION":
                pl["target_duration"] = int(value)
                pl["target_duration_count"] += 1
            elif tag == "#EXT-X-MEDIA-SEQUENCE":
                pl["media_sequence"] = int(value)
            elif tag == "#EXT-X-DISCONTINUITY-SEQUENCE":
                pl["discontinuity_sequence"] = int(value)
            elif tag == "#EXT-X-SERVER-CONTROL":
                pl["server_control"] = parse_attrs(value)
            elif tag == "#EXT-X-PART-INF":
                pl["part_inf"] = parse_attrs(value)
            elif tag == "#EXT-X-SKIP":
                pl["skip"] = parse_attrs(value)
            elif tag == "#EXT-X-PRELOAD-HINT":
                pl["preload_hint"] = parse_attrs(value)
            elif tag == "#EXT-X-MAP":
                pl["maps"].append(parse_attrs(value))
                cur_map = pl["maps"][-1].get("URI")
            elif tag == "#EXTINF":
                dur = value.split(",")[0]
                pending["duration"] = float(dur)
                pl["float_extinf"] |= not dur.isdigit()
            elif tag == "#EXT-X-DISCONTINUITY":
                pending["discontinuity"] = True
            elif tag == "#EXT-X-PROGRAM-DATE-TIME":
                pending["program_date_time"] = value
            elif tag == "#EXT-X-PART":
                a = parse_attrs(value)
                pending["parts"].append({"duration": float(a["DURATION"]), "uri": a["URI"],
                                         "independent": a.get("INDEPENDENT") == "YES", "gap": a.get("GAP") == "YES",
                                         "index": len(pending["parts"])})
            elif tag == "#EXT-X-ENDLIST":
                pl["endlist"] = True
            elif tag == "#EXT-X-I-FRAMES-ONLY":
                pl["i_frames_only"] = True
        except (ValueError, KeyError) as e:
            pl["errors"].append(f"bad {tag} line {line!r}: {e!r}")
    skipped = 0
    if pl["skip"] is not None:
        try:
            skipped = int(pl["skip"]["SKIPPED-SEGMENTS"])
        except (KeyError, ValueError):
            pl["errors"].append(f"EXT-X-SKIP without a valid SKIPPED-SEGMENTS: {pl['skip']}")
    first = pl["media_sequence"] + skipped
    for i, seg in enumerate(pl["segments"]):
        seg["msn"] = first + i
    pl["next_msn"] = first + len(pl["segments"])
    pl["trailing_parts"] = pending["parts"]
    pl["trailing_program_date_time"] = pending["program_date_time"]
    return pl


def next_part(pl):
    """(msn, index) of the part after the last listed one: what a blocking reload should ask for."""
    return pl["next_msn"], len(pl["trailing_parts"])


def part_id(uri):
    """(msn, index) read from a part URI named part<msn>.<index>.<ext>[?query], else None."""
    m = PART_NAME_RE.search(uri.rsplit("/", 1)[-1])
    return (int(m.group(1)), int(m.group(2))) if m else None


class PlaylistChecker:
    """Checks every playlist a test sees against RFC 8216, RFC 8216bis (LL-HLS) and this server's
    promises. check() returns this playlist's violations; state is kept per stream (the playlist URL
    without its query) for the rules across reloads. All violations and the SHOULD-level warnings
    accumulate in .violations and .warnings as "url: message"."""

    def __init__(self):
        self.streams = {}
        self.violations = []
        self.warnings = []

    def check(self, text, url=""):
        pl = text if isinstance(text, dict) else parse_playlist(text)
        v, w = [], []
        self._single(pl, v, w)
        self._reloads(pl, self.streams.setdefault(url.split("?")[0], {}), v)
        self.violations += [f"{url}: {m}" for m in v]
        self.warnings += [f"{url}: {m}" for m in w]
        return v

    def _single(self, pl, v, w):
        """Rules about one playlist."""
        v += pl["errors"]
        if not pl["extm3u"]:
            v.append("does not start with #EXTM3U")
        if pl["target_duration_count"] != 1:
            v.append(f"{pl['target_duration_count']} EXT-X-TARGETDURATION tags, must be exactly 1")
        sc, td = pl["server_control"], pl["target_duration"]
        # EXT-X-VERSION must cover every feature used (RFC 8216 7, 8216bis 8).
        need = [(3, "floating-point EXTINF")] if pl["float_extinf"] else []
        if pl["maps"] and not pl["i_frames_only"]:
            need.append((6, "EXT-X-MAP without EXT-X-I-FRAMES-ONLY"))
        if pl["skip"] is not None or "CAN-SKIP-UNTIL" in sc:
            need.append((9, "EXT-X-SKIP / CAN-SKIP-UNTIL"))
        if pl["version"] is None:
            v.append("no EXT-X-VERSION")
        else:
            v += [f"EXT-X-VERSION {pl['version']} < {n} needed by {why}" for n, why in need if pl["version"] < n]
        last_pdt = None
        for seg in pl["segments"]:
            d, m = seg["duration"], seg["msn"]
            if td is not None and d is not None:
                if int(d + 0.5) > td:  # RFC 8216 4.3.3.1: EXTINF rounded to an integer <= target
                    v.append(f"msn {m}: EXTINF {d} rounds above EXT-X-TARGETDURATION {td}")
                if d > td:  # this server's stricter promise
                    v.append(f"msn {m}: EXTINF {d} > EXT-X-TARGETDURATION {td}")
            pdt = seg["program_date_time"]
            if pdt is None:
                v.append(f"msn {m}: no EXT-X-PROGRAM-DATE-TIME")
            elif not PDT_RE.match(pdt):
                v.append(f"msn {m}: EXT-X-PROGRAM-DATE-TIME {pdt!r} is not YYYY-MM-DDThh:mm:ss.sssZ")
            else:
                if last_pdt is not None and pdt < last_pdt:
                    v.append(f"msn {m}: EXT-X-PROGRAM-DATE-TIME {pdt} before the previous segment's {last_pdt}")
                last_pdt = pdt
        if "CAN-SKIP-UNTIL" in sc and td is not None and float(sc["CAN-SKIP-UNTIL"]) < 6 * td:
            v.append(f"CAN-SKIP-UNTIL {sc['CAN-SKIP-UNTIL']} < 6 x target duration {td}")
        if "HOLD-BACK" in sc and td is not None and float(sc["HOLD-BACK"]) < 3 * td:
            v.append(f"HOLD-BACK {sc['HOLD-BACK']} < 3 x target duration {td}")
        if pl["part_inf"] is not None:
            self._low_latency(pl, v, w)

    def _low_latency(self, pl, v, w):
        """LL-HLS rules (RFC 8216bis 4.4.3.7, 4.4.3.8, 4.4.5.3, 6.2.5.2)."""
        sc = pl["server_control"]
        try:
            pt = float(pl["part_inf"]["PART-TARGET"])
        except (KeyError, ValueError):
            v.append(f"EXT-X-PART-INF without a valid PART-TARGET: {pl['part_inf']}")
            return
        if sc.get("CAN-BLOCK-RELOAD") != "YES":
            v.append("EXT-X-PART-INF but EXT-X-SERVER-CONTROL lacks CAN-BLOCK-RELOAD=YES")
        if "PART-HOLD-BACK" not in sc or float(sc["PART-HOLD-BACK"]) < 2 * pt:
            v.append(f"PART-HOLD-BACK {sc.get('PART-HOLD-BACK')} missing or < 2 x PART-TARGET {pt}")
        groups = [(s["msn"], s["parts"], s["duration"]) for s in pl["segments"] if s["parts"]]
        if pl["trailing_parts"]:
            groups.append((pl["next_msn"], pl["trailing_parts"], None))
        for msn, parts, extinf in groups:
            for p in parts:
                if p["duration"] > pt + 0.001:  # 3-decimal rounding allowed
                    v.append(f"part {msn}.{p['index']} ({p['uri']}): DURATION {p['duration']} > PART-TARGET {pt}")
            for p in parts[:-1]:  # SHOULD: all but a segment's last part >= 85% of PART-TARGET
                if p["duration"] < 0.85 * pt:
                    w.append(f"part {msn}.{p['index']}: DURATION {p['duration']} < 85% of PART-TARGET {pt}")
            total = sum(p["duration"] for p in parts)
            if extinf is not None and abs(total - extinf) > max(0.005, 0.001 * len(parts)):
                v.append(f"msn {msn}: its {len(parts)} parts add up to {total:.3f}, EXTINF is {extinf}")
        if pl["endlist"]:
            return
        hint = pl["preload_hint"]
        if hint is None or hint.get("TYPE") != "PART" or "URI" not in hint:
            v.append(f"no EXT-X-PRELOAD-HINT TYPE=PART (got {hint})")
            return
        want, got = next_part(pl), part_id(hint["URI"])
        listed = {p["uri"] for _, parts, _ in groups for p in parts}
        if got is not None and got != want:
            v.append(f"PRELOAD-HINT {hint['URI']} is part {got}, the part after the last listed is {want}")
        elif hint["URI"] in listed:
            v.append(f"PRELOAD-HINT {hint['URI']} names a part already listed")

    def _reloads(self, pl, st, v):
        """Rules across reloads of one stream (RFC 8216 6.2.1, 6.2.2; target duration never shrinks)."""
        for key, name in (("media_sequence", "EXT-X-MEDIA-SEQUENCE"),
                          ("discontinuity_sequence", "EXT-X-DISCONTINUITY-SEQUENCE"),
                          ("target_duration", "EXT-X-TARGETDURATION")):
            if pl[key] is not None and st.get(key) is not None and pl[key] < st[key]:
                v.append(f"{name} went back from {st[key]} to {pl[key]}")
            st[key] = pl[key] if pl[key] is not None else st.get(key)
        uris, durs = st.setdefault("uris", {}), st.setdefault("durs", {})
        discs, dnums, parts = st.setdefault("discs", {}), st.setdefault("dnums", {}), st.setdefault("parts", {})
        if pl["skip"] is not None and pl["segments"]:
            first = pl["segments"][0]
            known = {u: m for m, u in uris.items()}.get(first["uri"])
            if known is not None and known != first["msn"]:
                v.append(f"delta playlist: MEDIA-SEQUENCE + SKIPPED-SEGMENTS = {first['msn']}, but its first "
                         f"segment {first['uri']} was listed as msn {known}")
        dnum = pl["discontinuity_sequence"]
        for seg in pl["segments"]:
            m = seg["msn"]
            dnum += seg["discontinuity"]
            if m in uris and uris[m] != seg["uri"]:
                v.append(f"msn {m}: URI changed from {uris[m]} to {seg['uri']}")
            if m in durs and seg["duration"] is not None and abs(durs[m] - seg["duration"]) > 1e-9:
                v.append(f"msn {m}: EXTINF changed from {durs[m]} to {seg['duration']}")
            if m in discs and discs[m] != seg["discontinuity"]:
                v.append(f"msn {m}: EXT-X-DISCONTINUITY {'dropped' if discs[m] else 'added'} on reload")
            # A delta playlist does not list the skipped segments' discontinuities: no count check there.
            if pl["skip"] is None and m in dnums and dnums[m] != dnum:
                v.append(f"msn {m}: discontinuity number (DISCONTINUITY-SEQUENCE + tags) changed from {dnums[m]} to {dnum}")
            uris[m], durs[m], discs[m] = seg["uri"], seg["duration"], seg["discontinuity"]
            if pl["skip"] is None:
                dnums[m] = dnum
        listed = [(s["msn"], p) for s in pl["segments"] for p in s["parts"]]
        for msn, p in listed + [(pl["next_msn"], p) for p in pl["trailing_parts"]]:
            old = parts.setdefault((msn, p["index"]), (p["uri"], p["duration"]))
            if old != (p["uri"], p["duration"]):
                v.append(f"part {msn}.{p['index']}: changed from {old} to {(p['uri'], p['duration'])}")


# ------------------------------------------------------------------------------------ MPEG-TS

def _crc_table():
    table = []
    for i in range(256):
        c = i << 24
        for _ in range(8):
            c = ((c << 1) ^ 0x04C11DB7) if c & 0x80000000 else (c << 1)
        table.append(c & 0xFFFFFFFF)
    return table


_CRC = _crc_table()
ADTS_RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]
TS_KINDS = {0x1B: "video", 0x24: "video", 0x0F: "audio"}


def mpeg_crc32(data):
    """CRC-32/MPEG-2 (PSI sections); over a whole section including its CRC it is 0."""
    crc = 0xFFFFFFFF
    for b in data:
        crc = ((crc << 8) & 0xFFFFFFFF) ^ _CRC[(crc >> 24) ^ b]
    return crc


def strip_adts(frame):
    """(raw AAC, header fields) of one ADTS frame; ValueError if the header is invalid or its
    frame_length is not len(frame)."""
    if len(frame) < 7 or frame[0] != 0xFF or frame[1] & 0xF6 != 0xF0:
        raise ValueError(f"no ADTS syncword/layer 0: {frame[:4].hex()}")
    f = {"protection_absent": frame[1] & 1, "object_type": (frame[2] >> 6) + 1,
         "sample_rate_index": (frame[2] >> 2) & 15, "channels": ((frame[2] & 1) << 2) | (frame[3] >> 6),
         "frame_length": ((frame[3] & 3) << 11) | (frame[4] << 3) | (frame[5] >> 5),
         "raw_blocks": (frame[6] & 3) + 1}
    if f["sample_rate_index"] >= len(ADTS_RATES):
        raise ValueError(f"ADTS sampling_frequency_index {f['sample_rate_index']}")
    f["sample_rate"] = ADTS_RATES[f["sample_rate_index"]]
    if f["frame_length"] != len(frame):
        raise ValueError(f"ADTS frame_length {f['frame_length']} but the frame has {len(frame)} bytes")
    hdr = 7 if f["protection_absent"] else 9
    return frame[hdr:], f


def annexb_nals(data):
    """NAL units of an Annex B byte stream (3- and 4-byte start codes), without start codes."""
    starts = [m.end() for m in re.finditer(b"\x00\x00\x01", data)]
    return [data[s:e - 3].rstrip(b"\x00") if e else data[s:].rstrip(b"\x00")
            for s, e in zip(starts, starts[1:] + [None])]


def avcc_nals(data, length_size=4):
    """NAL units of length-prefixed (avcC/hvcC) sample data; ValueError if a length overruns."""
    nals, i = [], 0
    while i < len(data):
        n = int.from_bytes(data[i:i + length_size], "big")
        if i + length_size + n > len(data):
            raise ValueError(f"NAL length {n} at {i} runs past the {len(data)}-byte sample")
        nals.append(data[i + length_size:i + length_size + n])
        i += length_size + n
    return nals


def _ts_time(b, i):
    return ((b[i] >> 1) & 7) << 30 | b[i + 1] << 22 | (b[i + 2] >> 1) << 15 | b[i + 3] << 7 | b[i + 4] >> 1


def ts_demux(data):
    """{"video": [AU], "audio": [AU], "errors": [...], "streams": {pid: stream_type}} of one TS;
    AU = {"pts", "dts" (90 kHz), "data" (video: the PES payload, audio: one ADTS frame), "key"}."""
    return ts_demux_many([data])


def ts_demux_many(pieces):
    """ts_demux over consecutive pieces (bytes, or (bytes, discontinuity) tuples), keeping
    continuity counters across pieces except after a discontinuity. Each piece must end on a
    complete PES (a segment must be self-contained)."""
    st = {"cc": {}, "pmt": set(), "streams": {}, "pes": {}}
    out = {"video": [], "audio": [], "errors": [], "streams": st["streams"]}
    for n, piece in enumerate(pieces):
        data, disc = piece if isinstance(piece, tuple) else (piece, False)
        if disc:
            st["cc"].clear()
        _ts_piece(bytes(data), st, out, f"piece {n}")
    return out


def _ts_piece(data, st, out, where):
    err = out["errors"]
    if len(data) % 188:
        err.append(f"{where}: {len(data)} bytes is not a multiple of 188")
    for off in range(0, len(data) - 187, 188):
        p = data[off:off + 188]
        at = f"{where} @{off}"
        if p[0] != 0x47:
            err.append(f"{at}: sync byte {p[0]:#04x}")
            continue
        if p[1] & 0x80:
            err.append(f"{at}: transport_error_indicator set")
        pusi, pid, afc, cc = p[1] & 0x40, ((p[1] & 0x1F) << 8) | p[2], (p[3] >> 4) & 3, p[3] & 15
        if pid == 0x1FFF:
            continue
        pos, rai, disc = 4, False, False
        if afc & 2:
            if p[4]:
                disc, rai = bool(p[5] & 0x80), bool(p[5] & 0x40)
            pos = 5 + p[4]
            if pos > 188:
                err.append(f"{at}: adaptation field length {p[4]}")
                continue
        if not afc & 1:
            continue
        last = st["cc"].get(pid)
        if last is not None and not disc and cc != (last + 1) & 15:
            err.append(f"{at}: PID {pid:#x} continuity counter {last} -> {cc}")
        st["cc"][pid] = cc
        payload = p[pos:]
        if pid == 0 or pid in st["pmt"]:
            if pusi:
                _ts_psi(pid, payload, st, err, at)
        elif pid in st["streams"]:
            if pusi:
                if pid in st["pes"]:
                    _ts_pes(st["pes"].pop(pid), TS_KINDS[st["streams"][pid]], out, at)
                st["pes"][pid] = {"buf": bytearray(payload), "key": rai}
            elif pid in st["pes"]:
                st["pes"][pid]["buf"] += payload
            else:
                err.append(f"{at}: PID {pid:#x} payload before any PES start")
    for pid, pes in list(st["pes"].items()):  # the piece must end on a complete PES
        _ts_pes(pes, TS_KINDS[st["streams"][pid]], out, f"{where} end")
    st["pes"].clear()


def _ts_psi(pid, payload, st, err, at):
    """PAT (PID 0) and PMT sections, single-packet only, CRC-checked."""
    sec = payload[1 + payload[0]:]
    if len(sec) < 3:
        return err.append(f"{at}: PID {pid:#x} truncated section")
    end = 3 + (((sec[1] & 0x0F) << 8) | sec[2])
    if end > len(sec):
        return err.append(f"{at}: PID {pid:#x} section spans packets (unsupported)")
    sec = sec[:end]
    if mpeg_crc32(sec) != 0:
        return err.append(f"{at}: PID {pid:#x} table {sec[0]:#x} CRC32 mismatch")
    if pid == 0 and sec[0] == 0:
        for i in range(8, end - 4, 4):
            if int.from_bytes(sec[i:i + 2], "big"):
                st["pmt"].add(((sec[i + 2] & 0x1F) << 8) | sec[i + 3])
    elif sec[0] == 2:
        i = 12 + (((sec[10] & 0x0F) << 8) | sec[11])
        while i + 5 <= end - 4:
            if sec[i] in TS_KINDS:
                st["streams"][((sec[i + 1] & 0x1F) << 8) | sec[i + 2]] = sec[i]
            i += 5 + (((sec[i + 3] & 0x0F) << 8) | sec[i + 4])


def _ts_pes(pes, kind, out, at):
    b, err = bytes(pes["buf"]), out["errors"]
    if len(b) < 9 or b[:3] != b"\x00\x00\x01":
        return err.append(f"{at}: {kind} PES without a start code")
    plen, flags, hlen = int.from_bytes(b[4:6], "big"), b[7] >> 6, b[8]
    if plen and len(b) != plen + 6:
        err.append(f"{at}: {kind} PES_packet_length {plen + 6} but {len(b)} bytes")
        b = b[:plen + 6]
    if not flags & 2:
        return err.append(f"{at}: {kind} PES without PTS")
    pts = _ts_time(b, 9)
    dts = _ts_time(b, 14) if flags == 3 else pts
    body = b[9 + hlen:]
    if kind == "video":
        return out["video"].append({"pts": pts, "dts": dts, "data": body, "key": pes["key"]})
    i = k = 0
    while i < len(body):  # a PES may carry several ADTS frames: one AU each
        flen = ((body[i + 3] & 3) << 11) | (body[i + 4] << 3) | (body[i + 5] >> 5) if i + 7 <= len(body) else 0
        try:
            _, f = strip_adts(body[i:i + flen])
        except ValueError as e:
            return err.append(f"{at}: audio PES frame {k}: {e}")
        t = k * 1024 * 90000 // f["sample_rate"]
        out["audio"].append({"pts": pts + t, "dts": dts + t, "data": body[i:i + flen], "key": pes["key"]})
        i, k = i + flen, k + 1


# ------------------------------------------------------------------------------------ fMP4

def _u(data, i, n):
    return int.from_bytes(data[i:i + n], "big")


def _boxes(data, start, end, errors, where):
    """[(type, box_start, payload_start, box_end)] of the boxes in data[start:end]; size problems
    go to errors and stop the walk."""
    out, i = [], start
    while i < end:
        if end - i < 8:
            errors.append(f"{where}: {end - i} stray bytes at {i}")
            break
        size, typ, hdr = _u(data, i, 4), data[i + 4:i + 8].decode("latin-1"), 8
        if size == 1:
            size, hdr = _u(data, i + 8, 8), 16
        elif size == 0:
            size = end - i
        if size < hdr or i + size > end:
            errors.append(f"{where}: box {typ!r} at {i} has size {size}, inconsistent with its parent ending at {end}")
            break
        out.append((typ, i, i + hdr, i + size))
        i += size
    return out


def _find(data, start, end, path, errors):
    """(payload_start, end) of the first box along path (e.g. ["mdia", "mdhd"]), else None."""
    for typ, _, p, e in _boxes(data, start, end, errors, path[0]):
        if typ == path[0]:
            return (p, e) if len(path) == 1 else _find(data, p, e, path[1:], errors)
    return None


def _esds_asc(b):
    """The AudioSpecificConfig in an esds payload: ES_Descriptor > DecoderConfig > DecoderSpecificInfo."""
    def desc(i):
        tag, n, i = b[i], 0, i + 1
        for _ in range(4):
            n, i = (n << 7) | (b[i] & 0x7F), i + 1
            if not b[i - 1] & 0x80:
                break
        return tag, i, n
    try:
        tag, i, _ = desc(4)
        flags, i = b[i + 2], i + 3
        i += (2 if flags & 0x80 else 0) + (1 + b[i] if flags & 0x40 else 0)
        i += 2 if flags & 0x20 else 0
        tag2, i, _ = desc(i)
        tag3, i, n = desc(i + 13)
        return b[i:i + n] if (tag, tag2, tag3) == (3, 4, 5) else None
    except IndexError:
        return None


def fmp4_init(data):
    """{"tracks": {track_id: {handler, timescale, codec, config, width/height or channels/
    sample_rate, trex}}, "video"/"audio": first track id of that kind, "brands", "errors"} of an
    ftyp+moov init segment. config is the avcC/hvcC payload or the esds AudioSpecificConfig."""
    errors, tracks = [], {}
    res = {"tracks": tracks, "video": None, "audio": None, "brands": [], "errors": errors}
    trex = {}
    for typ, _, p, e in _boxes(data, 0, len(data), errors, "init"):
        if typ == "ftyp":
            res["brands"] = [data[i:i + 4].decode("latin-1") for i in range(p, e, 4) if i != p + 4]
        if typ != "moov":
            continue
        for t2, _, p2, e2 in _boxes(data, p, e, errors, "moov"):
            if t2 == "mvex":
                for t3, _, p3, _ in _boxes(data, p2, e2, errors, "mvex"):
                    if t3 == "trex":
                        trex[_u(data, p3 + 4, 4)] = {"duration": _u(data, p3 + 12, 4), "size": _u(data, p3 + 16, 4),
                                                     "flags": _u(data, p3 + 20, 4)}
            elif t2 == "trak":
                tr = _trak(data, p2, e2, errors)
                if tr:
                    tracks[tr["track_id"]] = tr
    for tid, tr in tracks.items():
        tr["trex"] = trex.get(tid, {})
        kind = {"vide": "video", "soun": "audio"}.get(tr["handler"])
        if kind and res[kind] is None:
            res[kind] = tid
    return res


def _trak(data, p, e, errors):
    tkhd, mdhd = _find(data, p, e, ["tkhd"], errors), _find(data, p, e, ["mdia", "mdhd"], errors)
    hdlr, stsd = _find(data, p, e, ["mdia", "hdlr"], errors), _find(data, p, e, ["mdia", "minf", "stbl", "stsd"], errors)
    if not (tkhd and mdhd and hdlr and stsd):
        errors.append(f"trak at {p} lacks tkhd/mdhd/hdlr/stsd")
        return None
    off = lambda b: b[0] + (20 if data[b[0]] == 1 else 12)  # noqa: E731 (v1 has 64-bit times)
    tr = {"track_id": _u(data, off(tkhd), 4), "timescale": _u(data, off(mdhd), 4),
          "handler": data[hdlr[0] + 8:hdlr[0] + 12].decode("latin-1"), "codec": None, "config": None}
    entries = _boxes(data, stsd[0] + 8, stsd[1], errors, "stsd")
    if not entries:
        return tr
    typ, _, ep, ee = entries[0]
    tr["codec"] = typ
    if tr["handler"] == "vide":
        tr["width"], tr["height"], child = _u(data, ep + 24, 2), _u(data, ep + 26, 2), ep + 78
    else:
        tr["channels"], tr["sample_rate"] = _u(data, ep + 16, 2), _u(data, ep + 24, 4) >> 16
        child = ep + 28 + {1: 16, 2: 36}.get(_u(data, ep + 8, 2), 0)
    for t, _, cp, ce in _boxes(data, child, ee, errors, typ):
        if t in ("avcC", "hvcC"):
            tr["config"], tr["config_box"] = data[cp:ce], t
        elif t == "esds":
            tr["config"], tr["config_box"] = _esds_asc(data[cp:ce]), t
    return tr


def fmp4_fragments(data, init=None):
    """{"video": [sample], "audio": [sample], "tracks": {id: [sample]}, "errors": [...]} of the
    moof/mdat pairs in data (init defaults to the moov in data itself). sample = {"dts", "pts",
    "duration" (track timescale), "data", "key"}. Errors: mfhd sequence not +1, tfhd without
    default-base-is-moof (CMAF), a trun outside its mdat, tfdt not continuing the track's previous
    sample (dts + duration), box sizes inconsistent."""
    init = init or fmp4_init(data)
    errors, tracks = [], init["tracks"]
    out = {"tracks": {tid: [] for tid in tracks}, "errors": errors}
    top = _boxes(data, 0, len(data), errors, "media")
    seq, next_dts = None, {}
    for n, (typ, s, p, e) in enumerate(top):
        if typ != "moof":
            continue
        mdat = next((b for b in top[n + 1:] if b[0] in ("mdat", "moof")), None)
        if mdat is None or mdat[0] != "mdat":
            errors.append(f"moof at {s} has no mdat after it")
            mdat = ("mdat", e, e, e)
        prev_end = None
        for t2, _, p2, e2 in _boxes(data, p, e, errors, "moof"):
            if t2 == "mfhd":
                new = _u(data, p2 + 4, 4)
                if seq is not None and new != seq + 1:
                    errors.append(f"moof at {s}: mfhd sequence {new} after {seq}")
                seq = new
            elif t2 == "traf":
                prev_end = _traf(data, s, p2, e2, mdat, tracks, out, next_dts, prev_end)
    out["video"] = out["tracks"].get(init["video"], [])
    out["audio"] = out["tracks"].get(init["audio"], [])
    return out


def _traf(data, moof, p, e, mdat, tracks, out, next_dts, prev_end):
    errors = out["errors"]
    tfhd, tfdt, truns = None, None, []
    for t, _, bp, be in _boxes(data, p, e, errors, "traf"):
        if t == "tfhd":
            tfhd = bp
        elif t == "tfdt":
            tfdt = _u(data, bp + 4, 8 if data[bp] == 1 else 4)
        elif t == "trun":
            truns.append((bp, be))
    if tfhd is None:
        errors.append(f"traf in moof at {moof} without tfhd")
        return prev_end
    flags, tid, i = _u(data, tfhd + 1, 3), _u(data, tfhd + 4, 4), tfhd + 8
    fields = {}
    for bit, name, size in ((1, "base", 8), (2, "sdi", 4), (8, "duration", 4), (0x10, "size", 4), (0x20, "flags", 4)):
        if flags & bit:
            fields[name], i = _u(data, i, size), i + size
    if tid not in tracks:
        errors.append(f"moof at {moof}: traf for unknown track {tid}")
        return prev_end
    dflt = dict(tracks[tid].get("trex", {}), **fields)
    if "base" in fields:
        base = fields["base"]
    elif flags & 0x20000:
        base = moof
    else:
        errors.append(f"moof at {moof}: track {tid} tfhd without default-base-is-moof")
        base = prev_end if prev_end is not None else moof
    dts = next_dts.get(tid, 0) if tfdt is None else tfdt
    if tfdt is None:
        errors.append(f"moof at {moof}: track {tid} traf without tfdt")
    elif tid in next_dts and tfdt != next_dts[tid]:
        errors.append(f"moof at {moof}: track {tid} tfdt {tfdt}, previous sample ended at {next_dts[tid]}")
    pos = base
    for bp, be in truns:
        version, tf, count, i = data[bp], _u(data, bp + 1, 3), _u(data, bp + 4, 4), bp + 8
        if tf & 1:
            pos, i = base + int.from_bytes(data[i:i + 4], "big", signed=True), i + 4
        first_flags = None
        if tf & 4:
            first_flags, i = _u(data, i, 4), i + 4
        per = sum(4 for bit in (0x100, 0x200, 0x400, 0x800) if tf & bit)
        if i + per * count > be:
            errors.append(f"moof at {moof}: track {tid} trun of {count} samples runs past its box")
            continue
        for k in range(count):
            dur, size, sflags, cto = dflt.get("duration", 0), dflt.get("size", 0), dflt.get("flags", 0), 0
            if k == 0 and first_flags is not None:
                sflags = first_flags
            for bit, name in ((0x100, "dur"), (0x200, "size"), (0x400, "flags"), (0x800, "cto")):
                if tf & bit:
                    val = int.from_bytes(data[i:i + 4], "big", signed=(name == "cto" and version == 1))
                    dur, size, sflags, cto = {"dur": (val, size, sflags, cto), "size": (dur, val, sflags, cto),
                                              "flags": (dur, size, val, cto), "cto": (dur, size, sflags, val)}[name]
                    i += 4
            if pos < mdat[2] or pos + size > mdat[3]:
                errors.append(f"moof at {moof}: track {tid} sample {k} bytes [{pos}, {pos + size}) outside "
                              f"its mdat payload [{mdat[2]}, {mdat[3]})")
            out["tracks"][tid].append({"dts": dts, "pts": dts + cto, "duration": dur, "data": data[pos:pos + size],
                                       "key": not sflags & 0x10000})
            pos, dts = pos + size, dts + dur
    next_dts[tid] = dts
    return pos


# ------------------------------------------------------------------------------------ live reader

class HlsReader:
    """Reads a live stream like an (LL-)HLS client and records what it saw.

    Low latency (when the playlist has EXT-X-PART-INF): blocking reloads asking for the part after
    the last listed one, timing each (.blocking_seconds); every new part is fetched. Otherwise: the
    playlist is polled every target duration / 2 and new segments fetched. Init segments (EXT-X-MAP)
    are fetched once. Records .playlists [{time, url, text, seconds}], .media [{msn, index (None: a
    whole segment), uri, data, listed (time of the playlist listing it), time (response time),
    seconds}] in fetch order, .errors. Every playlist goes to the checker."""

    def __init__(self, base_url, checker=None, low_latency=True):
        path = urllib.parse.urlsplit(base_url).path
        self.url = base_url if path.endswith(".m3u8") else urllib.parse.urljoin(base_url.rstrip("/") + "/", "index.m3u8")
        self.checker, self.low_latency = checker, low_latency
        self.playlists, self.blocking_seconds, self.media, self.errors = [], [], [], []
        self.inits = {}       # resolved URL -> bytes
        self.complete = {}    # msn -> {"uri", "parts", "map", "discontinuity", "duration"} (URLs resolved)
        self.ended = False
        self._got, self._conns, self._td = {}, {}, 6
        self._stop, self._thread = threading.Event(), None

    def _get(self, url, timeout):
        """(status, body, seconds) of a GET over a kept-alive connection (one retry if it was dropped)."""
        u = urllib.parse.urlsplit(url)
        t0 = time.monotonic()
        for attempt in (0, 1):
            conn = self._conns.get(u.netloc)
            reused = conn is not None
            if conn is None:
                if u.scheme == "https":
                    conn = http.client.HTTPSConnection(u.netloc, timeout=timeout, context=ssl._create_unverified_context())
                else:
                    conn = http.client.HTTPConnection(u.netloc, timeout=timeout)
                self._conns[u.netloc] = conn
            if conn.sock is not None:
                conn.sock.settimeout(timeout)
            try:
                conn.request("GET", u.path + ("?" + u.query if u.query else ""))
                resp = conn.getresponse()
                body = resp.read()
                if resp.will_close:
                    conn.close()
                    self._conns.pop(u.netloc, None)
                return resp.status, body, time.monotonic() - t0
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                conn.close()
                self._conns.pop(u.netloc, None)
                if attempt or not reused:
                    raise
            except Exception:
                conn.close()
                self._conns.pop(u.netloc, None)
                raise

    def _fetch(self, url, timeout=10):
        """(body, seconds, response time) or None after recording the error."""
        try:
            status, body, secs = self._get(url, timeout)
        except Exception as e:  # noqa: BLE001 (recorded, the reader keeps going)
            self.errors.append(f"GET {url}: {e!r}")
            return None
        if status != 200:
            self.errors.append(f"GET {url}: HTTP {status}")
            return None
        return body, secs, time.time()

    def _load(self, url, blocking=False):
        got = self._fetch(url, timeout=3 * self._td + 5 if blocking else 10)
        if got is None:
            return None
        text = got[0].decode("utf-8", "replace")
        self.playlists.append({"time": got[2], "url": url, "text": text, "seconds": got[1]})
        if blocking:
            self.blocking_seconds.append(got[1])
        if self.checker is not None:
            self.checker.check(text, url)
        pl = parse_playlist(text)
        pl["url"], pl["time"] = url, got[2]
        self._td = pl["target_duration"] or self._td
        return pl

    def _media(self, url, msn, index, listed):
        if url in self._got or self._stop.is_set():
            return
        got = self._fetch(url)
        if got is not None:
            self._got[url] = got[0]
            self.media.append({"msn": msn, "index": index, "uri": url, "data": got[0], "listed": listed,
                               "time": got[2], "seconds": got[1]})

    def _fetch_new(self, pl, ll):
        join = lambda uri: urllib.parse.urljoin(pl["url"], uri)  # noqa: E731 (keeps the URI's query)
        for seg in pl["segments"]:
            mp = join(seg["map"]) if seg["map"] else None
            if mp and mp not in self.inits:
                got = self._fetch(mp)
                if got is not None:
                    self.inits[mp] = got[0]
            c = self.complete.setdefault(seg["msn"], {"parts": []})
            c.update(uri=join(seg["uri"]), map=mp, discontinuity=seg["discontinuity"], duration=seg["duration"])
            if seg["parts"]:
                c["parts"] = [join(p["uri"]) for p in seg["parts"]]
            if ll:
                for p in seg["parts"]:
                    self._media(join(p["uri"]), seg["msn"], p["index"], pl["time"])
            else:
                self._media(c["uri"], seg["msn"], None, pl["time"])
        for p in pl["trailing_parts"] if ll else []:
            self._media(join(p["uri"]), pl["next_msn"], p["index"], pl["time"])

    def run(self, seconds):
        """Read for up to `seconds` (less if the stream ends: EXT-X-ENDLIST); returns self."""
        deadline = time.monotonic() + seconds
        pl = None
        while pl is None and time.monotonic() < deadline and not self._stop.is_set():
            pl = self._load(self.url) or time.sleep(0.2)
        while pl is not None and time.monotonic() < deadline and not self._stop.is_set():
            ll = self.low_latency and pl["part_inf"] is not None
            self._fetch_new(pl, ll)
            if pl["endlist"]:
                self.ended = True
                break
            if ll:
                msn, part = next_part(pl)
                sep = "&" if "?" in self.url else "?"
                new = self._load(f"{self.url}{sep}_HLS_msn={msn}&_HLS_part={part}", blocking=True)
            else:
                self._stop.wait(min(max(0.1, self._td / 2), max(0.0, deadline - time.monotonic())))
                new = self._load(self.url)
            if new is None:
                time.sleep(0.2)
            pl = new or pl
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()
        return self

    def start(self, seconds):
        """run(seconds) in a thread (for load checks); join() waits for it."""
        self._thread = threading.Thread(target=self.run, args=(seconds,), daemon=True)
        self._thread.start()
        return self

    def join(self, timeout=None):
        self._thread.join(timeout)
        return self

    def stop(self):
        self._stop.set()

    def segments_fetched(self):
        """Sorted msns of the complete segments fetched whole (as a segment, or all their parts)."""
        return sorted(m for m, c in self.complete.items() if "uri" in c and
                      (c["uri"] in self._got or (c["parts"] and all(u in self._got for u in c["parts"]))))

    def media_pieces(self, with_init=True):
        """[(bytes, discontinuity)] per segment fetched whole, in msn order (for ts_demux_many); a gap
        in msns counts as a discontinuity. With fMP4 the first piece, and any piece whose init
        segment differs from the previous one's, starts with the init segment."""
        pieces, prev, last_map = [], None, None
        for m in self.segments_fetched():
            c = self.complete[m]
            body = self._got.get(c["uri"]) or b"".join(self._got[u] for u in c["parts"])
            if with_init and c["map"] and c["map"] != last_map:
                body, last_map = self.inits.get(c["map"], b"") + body, c["map"]
            pieces.append((body, c["discontinuity"] or (prev is not None and m != prev + 1)))
            prev = m
        return pieces

    def media_bytes(self, with_init=True):
        """The whole fetched segments concatenated in msn order (see media_pieces)."""
        return b"".join(b for b, _ in self.media_pieces(with_init))


# ------------------------------------------------------------------------------------ self-test

def _ll_playlist(first, nseg, trailing, extinf=1.98, hint=True):
    """A hand-written LL-HLS playlist: nseg 2 s segments from msn `first`, the last one with parts."""
    out = ["#EXTM3U", "#EXT-X-VERSION:9", "#EXT-X-TARGETDURATION:2", f"#EXT-X-MEDIA-SEQUENCE:{first}",
           "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.5,CAN-SKIP-UNTIL=12.0",
           "#EXT-X-PART-INF:PART-TARGET=0.5", '#EXT-X-MAP:URI="init1.mp4"']
    for m in range(first, first + nseg + 1):
        out.append(f"#EXT-X-PROGRAM-DATE-TIME:2024-01-01T00:00:{2 * m:02d}.000Z")
        if m >= first + nseg - 1:
            n = 4 if m < first + nseg else trailing
            out += [f'#EXT-X-PART:DURATION={0.48 if i == 3 else 0.5:.3f},URI="part{m}.{i}.m4s"'
                    + (",INDEPENDENT=YES" if i == 0 else "") for i in range(n)]
        if m < first + nseg:
            out += [f"#EXTINF:{extinf:.3f},", f"seg{m}.m4s"]
    if hint:
        out.append(f'#EXT-X-PRELOAD-HINT:TYPE=PART,URI="part{first + nseg}.{trailing}.m4s"')
    return "\n".join(out) + "\n"


def _probe_counts(path):
    import json
    import subprocess
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "packet=codec_type", "-of", "json", path],
                         capture_output=True, text=True, check=True).stdout
    kinds = [p["codec_type"] for p in json.loads(out)["packets"]]
    return kinds.count("video"), kinds.count("audio")


def _selftest_playlists():
    c = PlaylistChecker()
    assert c.check(_ll_playlist(10, 2, 1), "http://h/s/index.m3u8") == [], c.violations
    assert c.check(_ll_playlist(11, 2, 2), "http://h/s/index.m3u8?_HLS_msn=12&_HLS_part=1") == [], c.violations
    assert c.warnings == [], c.warnings
    v = c.check(_ll_playlist(10, 2, 1), "http://h/s/index.m3u8")
    assert any("MEDIA-SEQUENCE went back" in m for m in v), v
    bad = PlaylistChecker().check(_ll_playlist(10, 2, 1, extinf=2.6, hint=False))
    assert any("rounds above" in m for m in bad) and any("EXTINF 2.6 > EXT-X-TARGETDURATION" in m for m in bad), bad
    assert any("parts add up" in m for m in bad) and any("PRELOAD-HINT" in m for m in bad), bad
    wrong = PlaylistChecker().check(_ll_playlist(10, 2, 1).replace("part12.1.m4s", "part12.2.m4s")
                                    .replace("VERSION:9", "VERSION:5"))
    assert len(wrong) == 3 and "is part (12, 2)" in wrong[2] and "< 9" in wrong[1], wrong
    print("ok: playlist checker: good LL-HLS passes across a reload; backwards MEDIA-SEQUENCE, EXTINF above "
          "the target, parts not adding up, a missing/wrong preload hint and a low version are caught", flush=True)


def _selftest_ts(d):
    import subprocess
    path = f"{d}/x.ts"
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25",
                    "-f", "lavfi", "-i", "sine", "-t", "2", "-c:v", "libx264", "-g", "25", "-c:a", "aac",
                    "-f", "mpegts", path], check=True)
    data = open(path, "rb").read()
    r = ts_demux(data)
    assert r["errors"] == [], r["errors"][:5]
    nv, na = _probe_counts(path)
    assert (len(r["video"]), len(r["audio"])) == (nv, na), (len(r["video"]), len(r["audio"]), nv, na)
    assert sum(au["key"] for au in r["video"]) == 2, [au["key"] for au in r["video"]]
    types = [n[0] & 0x1F for n in annexb_nals(r["video"][0]["data"])]
    assert 7 in types and 8 in types and 5 in types, types
    raw, f = strip_adts(r["audio"][0]["data"])
    assert f["sample_rate"] == 44100 and f["channels"] == 1 and len(raw) > 0, f
    dts = [au["dts"] for au in r["video"]]
    assert all(b - a == 3600 for a, b in zip(dts, dts[1:])), dts[:5]
    split = len(data) // 188 // 2 * 188
    assert ts_demux_many([data[:split], data[split:]])["errors"], "a piece cut mid-PES is reported"
    bad = bytearray(data)
    bad[188 * 3 + 3] ^= 0x05  # corrupt one continuity counter
    assert any("continuity" in e for e in ts_demux(bytes(bad))["errors"])
    print(f"ok: TS: {nv} video / {na} audio AUs as ffprobe, 2 keyframes, SPS/PPS/IDR, valid ADTS, "
          "no CC/CRC errors; a CC gap and a cut PES are reported", flush=True)


def _selftest_fmp4(d, extra=()):
    import subprocess
    path = f"{d}/x.mp4"
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25",
                    "-f", "lavfi", "-i", "sine", "-t", "2", "-c:v", "libx264", "-g", "25", "-c:a", "aac",
                    "-f", "mp4", "-movflags", "frag_keyframe+empty_moov+default_base_moof", *extra, path], check=True)
    data = open(path, "rb").read()
    cut = next(b[3] for b in _boxes(data, 0, len(data), [], "file") if b[0] == "moov")
    init = fmp4_init(data[:cut])
    assert init["errors"] == [] and init["video"] and init["audio"], init
    v, a = init["tracks"][init["video"]], init["tracks"][init["audio"]]
    assert (v["handler"], v["codec"], v["config_box"], v["width"]) == ("vide", "avc1", "avcC", 160), v
    assert (a["handler"], a["codec"], a["timescale"], a["config"][:2]) == ("soun", "mp4a", 44100, b"\x12\x08"), a
    r = fmp4_fragments(data[cut:], init)
    assert r["errors"] == [], r["errors"][:5]
    nv, na = _probe_counts(path)
    assert (len(r["video"]), len(r["audio"])) == (nv, na), (len(r["video"]), len(r["audio"]), nv, na)
    assert sum(s["key"] for s in r["video"]) == 2 and r["video"][0]["key"]
    assert 5 in [n[0] & 0x1F for n in avcc_nals(r["video"][0]["data"])]
    print(f"ok: fMP4: init tracks avc1/mp4a with avcC and an AAC-LC 44.1 kHz mono AudioSpecificConfig; {nv} video / {na} "
          "audio samples as ffprobe, 2 keyframes, no errors")
    return data, cut


def _selftest_reader(data, cut):
    """A fake LL-HLS origin publishing each moof+mdat of the fMP4 as a part in (2x) real time."""
    import http.server
    init, parts, t = data[:cut], [], 0.0
    info = fmp4_init(init)
    scale = info["tracks"][info["video"]]["timescale"]
    frags = [b for b in _boxes(data, cut, len(data), [], "media")]
    for moof, mdat in zip(frags[0::2], frags[1::2]):
        body = data[moof[1]:mdat[3]]
        vid = fmp4_fragments(data[:cut] + body)["video"]
        dur = sum(s["duration"] for s in vid) / scale
        if vid and vid[0]["key"] or not parts:
            parts.append([])
        parts[-1].append((body, dur, t))
        t += dur
    t0 = time.time() + 0.3
    ready = lambda m, i: m < len(parts) and i < len(parts[m]) and time.time() >= t0 + parts[m][i][2] / 2  # noqa

    def playlist():
        done = [m for m in range(len(parts)) if ready(m, len(parts[m]) - 1)]
        cur = len(done)
        out = ["#EXTM3U", "#EXT-X-VERSION:9", "#EXT-X-TARGETDURATION:1", "#EXT-X-PART-INF:PART-TARGET=0.2",
               "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=0.6", '#EXT-X-MAP:URI="init1.mp4"']
        for m in range(cur + 1 if cur < len(parts) else cur):
            out.append(time.strftime("#EXT-X-PROGRAM-DATE-TIME:%Y-%m-%dT%H:%M:%S", time.gmtime(t0 + parts[m][0][2]))
                       + ".000Z")
            out += [f'#EXT-X-PART:DURATION={p[1]:.3f},URI="part{m}.{i}.m4s"' for i, p in enumerate(parts[m])
                    if ready(m, i)]
            if m < cur:
                out += [f"#EXTINF:{sum(p[1] for p in parts[m]):.3f},", f"seg{m}.m4s"]
        n = sum(ready(cur, i) for i in range(len(parts[cur]))) if cur < len(parts) else 0
        out.append(f'#EXT-X-PRELOAD-HINT:TYPE=PART,URI="part{cur}.{n}.m4s"' if cur < len(parts) else "#EXT-X-ENDLIST")
        return "\n".join(out) + "\n"

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            path, _, query = self.path.partition("?")
            q = dict(urllib.parse.parse_qsl(query))
            if "_HLS_msn" in q:
                m, i = int(q["_HLS_msn"]), int(q.get("_HLS_part", 0))
                while time.time() < t0 + 30 and m < len(parts) and not ready(m, min(i, len(parts[m]) - 1)):
                    time.sleep(0.01)
            name = path.rsplit("/", 1)[-1]
            if name == "index.m3u8":
                body = playlist().encode()
            elif name == "init1.mp4":
                body = init
            elif (pid := part_id(name)) and ready(*pid):
                body = parts[pid[0]][pid[1]][0]
            else:
                return self.send_error(404)
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        checker = PlaylistChecker()
        r = HlsReader(f"http://127.0.0.1:{srv.server_port}/live/s/", checker).run(10)
    finally:
        srv.shutdown()
    assert r.ended and r.errors == [] and checker.violations == [], (r.errors, checker.violations[:5])
    assert r.segments_fetched() == list(range(len(parts))), r.segments_fetched()
    assert len(r.blocking_seconds) >= sum(map(len, parts)) - 2, r.blocking_seconds
    got = fmp4_fragments(r.media_bytes())
    want = fmp4_fragments(data)
    assert got["errors"] == [] and [s["data"] for s in got["video"]] == [s["data"] for s in want["video"]]
    assert len(got["audio"]) == len(want["audio"])
    print(f"ok: reader: {len(r.blocking_seconds)} blocking reloads, {len(r.media)} parts, segments "
          f"{r.segments_fetched()} fetched whole, media_bytes demuxes to the source's samples; "
          f"{len(checker.warnings)} warnings")


if __name__ == "__main__":
    import shutil
    import tempfile
    _selftest_playlists()
    if shutil.which("ffmpeg") and shutil.which("ffprobe"):
        with tempfile.TemporaryDirectory() as tmp:
            _selftest_ts(tmp)
            _selftest_fmp4(tmp)
            _selftest_reader(*_selftest_fmp4(tmp, ["-frag_duration", "200000"]))
    else:
        print("SKIP: no ffmpeg/ffprobe: demuxer and reader self-tests")
    print("PASS")
