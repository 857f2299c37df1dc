#!/usr/bin/python3
"""sluice-bench's WHEP players (bench/load/whep_client.*, the load client of bench/webrtc.sh) against
the server: ffmpeg publishes an H.264/AAC stream over RTMP; 5 `whep` players of it for 6 s:
  - every offer is answered, ICE and DTLS complete (AES-GCM SRTP, what the browser's offer gets),
    and every player gets video and audio RTP (read from the clear headers, not decrypted);
  - no freeze (500 ms without a new frame), no packet lost, a time to first frame for each;
  - the DELETE at the end is 200 for each, and the server logs each session's close;
then 2 players that offer only SRTP_AES128_CM_SHA1_80 get that profile."""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from srt_tools import free_udp_port  # noqa: E402

require_tools("ffmpeg")
t_start = time.time()
hport, uport = free_port(), free_udp_port()
server = Server("bench-whep", extra_yaml=f"http:\n  listen: 127.0.0.1:{hport}\n"
                                         f"webrtc:\n  listen: 127.0.0.1:{uport}\nworkers: 1\n").start()
check(wait_port(hport), "the HTTP listener is up")
src = make_media(os.path.join(server.dir, "src.flv"), seconds=30, size="640x360", vbitrate="800k")
pub = publish_ffmpeg(src, server.url("live/cam"), loop=True)
url = f"http://127.0.0.1:{hport}/live/cam/whep"


def bench(name, players, seconds, *extra):
    out = os.path.join(server.dir, f"{name}.json")
    r = subprocess.run([binary("bench/load/sluice-bench"), "whep", "-n", str(players), "--rate", "10", "-d",
                        str(seconds), "-q", "--json", out, *extra, url], capture_output=True, text=True,
                       timeout=seconds + 30)
    print(r.stdout, flush=True)
    check(r.returncode == 0, f"sluice-bench whep exits 0 ({r.returncode}: {r.stderr[-500:]})")
    return json.load(open(out))


try:
    check(wait_for(lambda: "event=publish" in server.log_text(), 10), "ffmpeg publishes live/cam over RTMP")
    time.sleep(1.0)
    j = bench("gcm", 5, 6)
    p, w = j["players"], j["whep"]
    check(p["ok"] == 5 and p["failed"] == 0, f"5 players play ({p['ok']} ok, {p['failure_reasons']})")
    check(list(w["dtls"]) == ["DTLSv1.2/ECDHE-ECDSA-AES128-GCM-SHA256/SRTP_AEAD_AES_128_GCM"],
          f"DTLS 1.2 with AES-GCM SRTP ({w['dtls']})")
    check(w["video_packets"] > 5 * 100 and w["audio_packets"] > 5 * 100,
          f"video and audio RTP arrive ({w['video_packets']} and {w['audio_packets']} packets)")
    check(w["frames"] >= 5 * 4 * 25 * 0.8, f"about 25 frames a second each ({w['frames']} in all)")
    check(p["stalls"] == 0, f"no freeze ({p['stalls']}; longest gap {w['max_frame_gap_ms']['max']} ms)")
    check(w["video_lost"] == 0 and w["audio_lost"] == 0, f"nothing lost ({w['video_lost']}, {w['audio_lost']})")
    check(p["ttff_ms"]["count"] == 5 and p["ttff_ms"]["max"] < 3000,
          f"a first frame for each within 3 s of the offer (max {p['ttff_ms']['max']:.0f} ms)")
    check(w["consent_answered"] >= 5, f"consent checks answered ({w['consent_answered']} of {w['consent_sent']})")
    check(w["deletes"] == {"200": 5}, f"the DELETEs are answered 200 ({w['deletes']})")
    check(wait_for(lambda: server.log_text().count('reason="DELETE from the client"') >= 5, 3),
          "the server closes the 5 sessions on their DELETE")
    j = bench("cm", 2, 3, "--srtp-profiles", "SRTP_AES128_CM_SHA1_80")
    check(j["players"]["ok"] == 2 and list(j["whep"]["dtls"]) == [
        "DTLSv1.2/ECDHE-ECDSA-AES128-GCM-SHA256/SRTP_AES128_CM_SHA1_80"],
        f"offering only AES128_CM_SHA1_80 gets it ({j['whep']['dtls']})")
finally:
    stop_proc(pub)
check(server.alive(), "the server is still running")
server.stop()
print(f"INFO took {time.time() - t_start:.1f} s")
print("PASS")
