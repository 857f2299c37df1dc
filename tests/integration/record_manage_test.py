#!/usr/bin/python3
"""Managing recordings (docs/recording.md): record.mode manual with the API's start and stop on a
server of two worker loops (the stream's publisher may be on either), a record.path template
with dated directories and {seq}, and record.keep removing old recordings by age and by total
size at start (and only finished .flv/.mp4 files: a .part and other files stay)."""
import glob
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg", "ffprobe")

tmp = workdir("record-manage")
rec = os.path.join(tmp, "rec")
hport = free_port()
TOKEN = "api-token-for-the-recordings-test"

# What retention finds at start: one recording two days old (age), three of 10 MiB from the last
# hours (size: 16 MiB), a recent small one, a .part and a text file that must stay.
now = time.time()
MiB = 1 << 20


def plant(rel, size, age_s):
    path = os.path.join(rec, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.truncate(size)  # sparse: the size counts, the disk is not used
    os.utime(path, (now - age_s, now - age_s))
    return path


old = plant("man/2020/old-1.flv", 1000, 2 * 86400)
big = [plant(f"man/big-{i}.mp4" if i == 1 else f"man/big-{i}.flv", 10 * MiB, (4 - i) * 3600) for i in range(3)]
small = plant("man/small.flv", 1000, 60)
part = plant("man/torn.flv.part", 5000, 3 * 86400)
notes = plant("man/notes.txt", 100, 5 * 86400)

apps = (f"  man: {{ type: live, record: {{ mode: manual, dir: {rec}, path: '{{app}}/%Y/{{stream}}-{{seq}}',\n"
        f"         keep: {{ age: 1d, size: 16MiB }} }} }}\n"
        f"  plain: {{ type: live }}\n")
extra = f"workers: 2\nhttp: {{ listen: 127.0.0.1:{hport}, api: {{ token: {TOKEN} }} }}\n"
server = Server("record-manage", apps=apps, extra_yaml=extra).start()
src = make_media(os.path.join(server.dir, "src.flv"), seconds=20)  # outlasts the test: no loop seams
pubs = []


def api(method, path, token=TOKEN):
    req = urllib.request.Request(f"http://127.0.0.1:{hport}{path}", method=method)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            body = r.read()
            return r.status, json.loads(body) if body else None
    except urllib.error.HTTPError as e:
        body = e.read()
        try:
            return e.code, json.loads(body)
        except ValueError:  # the token check answers in plain text
            return e.code, {"message": body.decode(errors="replace")}


def wait_for(pred, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.2)
    return pred()


try:
    # Retention at start.
    check(wait_for(lambda: not os.path.exists(old)), "keep.age removes the two-day-old recording")
    check(wait_for(lambda: not os.path.exists(big[0]) and not os.path.exists(big[1])),
          "keep.size removes the oldest ones (an .mp4 among them) until the rest fit in 16 MiB")
    check(os.path.exists(big[2]) and os.path.exists(small), "the newest recordings stay")
    check(os.path.exists(part) and os.path.exists(notes), "a .part and a file that is no recording stay, however old")
    check(not os.path.exists(os.path.join(rec, "man", "2020")), "the dated directory it emptied is removed")
    log = server.log_text()
    check(log.count("event=record_expired") == 3 and "reason=age" in log and "reason=size" in log,
          "each removal is logged with its reason")
    req = urllib.request.Request(f"http://127.0.0.1:{hport}/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    metrics = urllib.request.urlopen(req, timeout=5).read().decode()
    check("sluice_record_files_removed_total 3" in metrics, "/metrics counts them")

    # Manual mode: publishing records nothing until the API says so.
    for name in ("one", "two"):
        pubs.append(publish_ffmpeg(src, server.url(f"man/{name}")))
        time.sleep(0.5)
    pubs.append(publish_ffmpeg(src, server.url("plain/x"), loop=True))
    time.sleep(2.5)
    check(not glob.glob(os.path.join(rec, "man", "*", "one-*")), "manual mode: nothing recorded before the API starts it")
    status, clients = api("GET", "/api/v1/clients")
    where = {p: c["worker"] for c in clients for p in c.get("publishing", [])}
    check(where.get("man/one") is not None and where.get("man/one") != where.get("man/two"),
          f"the two publishers are on different workers ({where})")

    check(api("POST", "/api/v1/recordings/man/one", token=None)[0] == 401, "starting a recording needs the API token")
    check(api("POST", "/api/v1/recordings/man/one", token="wrong")[0] == 403, "and the right one")
    for name in ("one", "two"):
        status, body = api("POST", f"/api/v1/recordings/man/{name}")
        check(status == 202 and body == {"stream": f"man/{name}", "action": "start"},
              f"POST /api/v1/recordings/man/{name} starts it ({status} {body})")
    year = time.strftime("%Y", time.gmtime())
    # A recording counts bytes from its first frame; its path is "" until its file is created off the
    # loop (a threadpool job, later under load): both are waited for.
    status, body = wait_for(lambda: (lambda r: r if len(r[1]["recordings"]) == 2 and
                                     all(x["bytes"] > 0 and x["path"] for x in r[1]["recordings"]) else None)(
        api("GET", "/api/v1/recordings")), timeout=10) or api("GET", "/api/v1/recordings")
    recs = {r["stream"]: r for r in body["recordings"]}
    check(set(recs) == {"man/one", "man/two"} and {r["worker"] for r in recs.values()} == {0, 1},
          f"GET /api/v1/recordings lists both, from both workers ({body})")
    check(all(r["path"] == os.path.join(rec, "man", year, f"{n}-1.flv.part") for n, r in
              (("one", recs.get("man/one", {})), ("two", recs.get("man/two", {})))),
          "named by the template: man/<year>/<stream>-1.flv.part")
    status, body = api("POST", "/api/v1/recordings/man/one")
    check(status == 409 and "already" in body["message"], f"a second start is refused ({status})")
    check(api("POST", "/api/v1/recordings/plain/x")[0] == 409, "an app that does not record refuses")
    check(api("POST", "/api/v1/recordings/man/nobody")[0] == 404, "a stream nobody publishes is 404")
    check(api("POST", "/api/v1/recordings/nope/x")[0] == 404, "an unknown app is 404")
    check(api("PUT", "/api/v1/recordings/man/one")[0] == 405, "other methods are 405")

    time.sleep(3)
    for name in ("one", "two"):
        status, body = api("DELETE", f"/api/v1/recordings/man/{name}")
        check(status == 202, f"DELETE stops man/{name} ({status} {body})")
    done = wait_for(lambda: len(glob.glob(os.path.join(rec, "man", year, "*-1.flv"))) == 2 and
                    not glob.glob(os.path.join(rec, "man", year, "*.part")))
    check(done, f"both files are finished ({os.listdir(os.path.join(rec, 'man', year))})")
    # The other loop's figures are up to a quarter of a second old.
    body = wait_for(lambda: (lambda b: b if b == {"recordings": []} else None)(api("GET", "/api/v1/recordings")[1]),
                    timeout=2) or api("GET", "/api/v1/recordings")[1]
    check(body == {"recordings": []}, f"and no longer listed ({body})")
    check(api("DELETE", "/api/v1/recordings/man/one")[0] == 409, "stopping again: not being recorded")
    for name in ("one", "two"):
        path = os.path.join(rec, "man", year, f"{name}-1.flv")
        tags = flv_tags(path)
        first = next(t for t in tags if t[0] == 9 and t[4][1] != 0)
        check(tags[0][0] == 18 and (first[4][0] >> 4) == 1 and first[1] == 0,
              f"{name}: starts with onMetaData and a keyframe at 0 ms (the stream's last GOP start)")
        check(contiguous_in(media_runs(tags)[9], media_runs(flv_tags(src))[9]) >= 0,
              f"{name}: its video is a run of the published stream's")
        dur = float(subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path],
                                   capture_output=True, text=True).stdout.strip() or 0)
        check(2.0 <= dur <= 6.0, f"{name}: about the 3 s between start and stop, from a keyframe ({dur:.2f} s)")

    # A restart numbers the next file of the publication anew, never over an existing one.
    check(api("POST", "/api/v1/recordings/man/one")[0] == 202, "a stopped recording can start again")
    time.sleep(2)
    stop_proc(pubs[0])
    check(wait_for(lambda: os.path.exists(os.path.join(rec, "man", year, "one-1-1.flv"))),
          f"unpublish finishes it under a free name ({os.listdir(os.path.join(rec, 'man', year))})")
finally:
    for p in pubs:
        stop_proc(p)
    rc = server.stop()
check(rc == 0, "server exits 0")
print("PASS")
