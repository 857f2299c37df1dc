#!/usr/bin/python3
"""Issue 39: uploads go through the confined open, with no time-of-check/time-of-use gap. A
separate process keeps swapping a folder inside the upload root for a symlink to a folder outside
it, as fast as it can, while the test uploads to names through that folder (up to 1000 uploads,
at most ~20 s). Nothing may ever be written outside the root (the outside folder stays empty,
checked after every batch and at the end); every upload is answered 201/204 (stored), 403 (the
folder led out of the root), 409 (the folder was missing for a moment) or 412 (If-None-Match: *
met a stored file), never 500; what was stored is byte-exact, in the real folder, and no temporary
file is left behind. Then If-None-Match: * holds at the rename: a file created while the body
streams is not replaced (412). The swapper is a process, not a thread: a thread spinning on the GIL would
slow the uploads instead of racing them."""
import os
import random
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

TOKEN = "swap-Token_7"
UPLOADS = 1000
BATCH = 50
TIME_BOUND_S = 20.0

# The attack, in its own process: shows/ is moved aside and a symlink to outside/ takes its name,
# then back; SIGTERM ends it and it prints how many swaps it made.
SWAPPER = r"""
import os, signal, sys
inside, outside, hold = sys.argv[1:4]
stop = [False]
signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__(0, True))
print("ready", flush=True)
swaps = 0
while not stop[0]:
    os.rename(inside, hold)
    os.symlink(outside, inside)
    os.unlink(inside)
    os.rename(hold, inside)
    swaps += 1
print(swaps, flush=True)
"""


def read_head(s, buf):
    """Reads one response head from s (buf: bytes already read); returns (status, rest of buf)."""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before a response head ({buf[:80]!r})")
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), rest


def upload(path, body, if_none_match=False):
    """PUT with Expect: 100-continue, so a refusal comes before any body byte is sent (a refusal
    closes the connection with the body unread). Returns the final status."""
    head = (f"PUT {path} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: {len(body)}\r\n"
            f"Expect: 100-continue\r\nConnection: close\r\n" + ("If-None-Match: *\r\n" if if_none_match else "") +
            "\r\n")
    with socket.create_connection(("127.0.0.1", hport), timeout=10) as s:
        s.sendall(head.encode())
        status, rest = read_head(s, b"")
        if status == 100:
            s.sendall(body)
            status, rest = read_head(s, rest)
        return status


def files_under(d):
    return sorted(os.path.relpath(os.path.join(p, f), d) for p, dirs, fs in os.walk(d) for f in fs + [
        x for x in dirs if os.path.islink(os.path.join(p, x))])


hport = free_port()
server = vod_server("http-upload-swap")
with open(server.config) as f:
    cfg = f.read()
with open(server.config, "w") as f:
    f.write(cfg.replace("apps:\n", f"http:\n  listen: 127.0.0.1:{hport}\n  upload: {{ token: {TOKEN} }}\napps:\n", 1))
media = os.path.join(server.dir, "media")
inside_dir = os.path.join(media, "shows")
hold_dir = os.path.join(media, ".hold")
outside_dir = os.path.join(server.dir, "outside")
os.makedirs(inside_dir)
os.makedirs(outside_dir)
server.start()
check(wait_port(hport), "HTTP listener is up")

# Before the attack: an upload through the folder lands in it; through a symlink out, it is refused.
st = upload("/vod/shows/before.flv", b"before" * 100)
check(st == 201 and open(os.path.join(inside_dir, "before.flv"), "rb").read() == b"before" * 100,
      f"an upload through a real folder is stored ({st})")
os.symlink(outside_dir, os.path.join(media, "out-link"))
st = upload("/vod/out-link/x.flv", b"x" * 100)
check(st == 403 and os.listdir(outside_dir) == [], f"an upload through a symlink out of the root: 403 ({st})")
os.unlink(os.path.join(media, "out-link"))

swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, inside_dir, outside_dir, hold_dir],
                           stdout=subprocess.PIPE, text=True)
check(swapper.stdout.readline().strip() == "ready", "the swapper runs")
rng = random.Random(39)
# Upload i stores shows/u{i // 2}.flv: each name twice, the second time as a replacement (every
# 4th upload with If-None-Match: *, which must not replace).
stored = {}  # name -> the body the file must hold
counts = {}
wrong = []
started = time.time()
done = 0
try:
    while done < UPLOADS and time.time() - started < TIME_BOUND_S:
        for i in range(done, min(done + BATCH, UPLOADS)):
            name = f"u{i // 2}.flv"
            body = f"upload {i} ".encode() + rng.randbytes(rng.randrange(1000, 20000))
            inm = i % 4 == 3
            st = upload(f"/vod/shows/{name}", body, if_none_match=inm)
            counts[st] = counts.get(st, 0) + 1
            if st == 201:
                if name in stored:
                    wrong.append(f"upload {i}: 201 for a name stored before (it replaced: 204 expected)")
                stored[name] = body
            elif st == 204:
                if name not in stored or inm:
                    wrong.append(f"upload {i}: 204 without a stored file to replace (if_none_match={inm})")
                stored[name] = body
            elif st == 412:
                if name not in stored or not inm:
                    wrong.append(f"upload {i}: 412 without a stored file or If-None-Match")
            elif st not in (403, 409):
                wrong.append(f"upload {i}: answered {st}")
        done = min(done + BATCH, UPLOADS)
        # The outside folder first: it is what the attack is after.
        leaked = os.listdir(outside_dir)
        if leaked:
            check(False, f"after {done} uploads: nothing outside the root ({len(leaked)} files: {leaked[:5]})")
        if wrong:
            check(False, f"after {done} uploads: every answer as expected ({len(wrong)} not: {wrong[:5]})")
finally:
    swapper.send_signal(signal.SIGTERM)
    out, _ = swapper.communicate(timeout=10)
elapsed = time.time() - started
swaps = int(out.strip() or 0)
print(f"{done} uploads in {elapsed:.1f} s, {swaps} swaps; answers {dict(sorted(counts.items()))}", flush=True)
check(swapper.returncode == 0, "the swapper ended cleanly")
check(done >= 300, f"at least 300 uploads raced the swapping ({done})")
check(swaps > 1000, f"the swap really ran ({swaps} swaps)")
check(os.listdir(outside_dir) == [], "nothing was ever written outside the root")
check(counts.get(201, 0) > 0, f"uploads through the real folder were stored ({counts.get(201, 0)})")
check(counts.get(403, 0) > 0, f"uploads that met the symlink were refused with 403 ({counts.get(403, 0)})")

# The swapper stopped between cycles: shows/ is the real folder again.
check(os.path.isdir(inside_dir) and not os.path.islink(inside_dir) and not os.path.exists(hold_dir),
      "after the swapping shows/ is the real folder")
on_disk = files_under(inside_dir)
expected = sorted(["before.flv"] + list(stored))
check(on_disk == expected, f"the real folder holds exactly the stored uploads, no temporary file "
                           f"({len(on_disk)} files, {len(expected)} expected; extra {sorted(set(on_disk) - set(expected))[:5]},"
                           f" missing {sorted(set(expected) - set(on_disk))[:5]})")
bad = [n for n, b in stored.items() if open(os.path.join(inside_dir, n), "rb").read() != b]
check(not bad, f"every stored upload is byte-exact ({len(stored)} files; wrong: {bad[:5]})")
check(files_under(media) == ["shows/" + n for n in expected], "nothing else was written in the root")
check(os.listdir(outside_dir) == [], "the outside folder is still empty")

# Uploads work as before once the attack is over.
st = upload("/vod/shows/after.flv", b"after" * 100)
check(st == 201 and open(os.path.join(inside_dir, "after.flv"), "rb").read() == b"after" * 100,
      f"after the swapping an upload is stored ({st})")
# If-None-Match: * holds at the rename too: a file created while the body streams is not replaced.
target = os.path.join(inside_dir, "late.flv")
with socket.create_connection(("127.0.0.1", hport), timeout=10) as s:
    s.sendall(f"PUT /vod/shows/late.flv HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {TOKEN}\r\n"
              f"Content-Length: 2000\r\nIf-None-Match: *\r\nExpect: 100-continue\r\n\r\n".encode())
    st, rest = read_head(s, b"")
    check(st == 100, f"If-None-Match: * on a new name: 100 Continue ({st})")
    s.sendall(b"n" * 1000)
    with open(target, "wb") as f:
        f.write(b"written meanwhile")
    s.sendall(b"n" * 1000)
    st, _ = read_head(s, rest)
check(st == 412 and open(target, "rb").read() == b"written meanwhile",
      f"a file created during an If-None-Match: * upload is not replaced: 412 ({st})")
check(wait_for(lambda: sorted(f for f in os.listdir(inside_dir) if f.startswith(".")) == [], 3),
      "the refused upload's temporary file is removed")
events = guard_events(hport)
check(events.get("vod_outside_root", 0) >= counts.get(403, 0),
      f"the refusals are counted as vod_outside_root ({events.get('vod_outside_root')})")
check(server.alive(), "server still running")
rc = server.stop()
check(rc == 0, f"server exits 0 ({rc})")
check("event=upload_done" in server.log_text(), "log: upload_done lines")
print("PASS")
