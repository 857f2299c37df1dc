#!/usr/bin/python3
"""The command line: --version, --help, --print-default-config, --check-config (good and bad files:
errors name the file, line and key; unknown keys are errors), a bad config stops start-up, an
address in use is reported, SIGINT stops the server with exit status 0."""
import os
import re
import signal
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

sluice = binary("server/sluice")
d = workdir("cli")


def run(*args):
    return subprocess.run([sluice] + list(args), capture_output=True, text=True, timeout=20)


r = run("--version")
print(r.stdout)
check(r.returncode == 0 and r.stdout.startswith("sluice "), "--version prints the version")
lines = r.stdout.splitlines()
check(len(lines) == 3 and lines[1].startswith("git: ") and lines[2].startswith("build: type="),
      "--version: the version, the git description, the build options")
# Built from this checkout (cmake/write_version.cmake): the commit it names is in the repository.
if os.path.exists(os.path.join(SOURCE_DIR, ".git")):
    git = re.fullmatch(r"git: (?:v\S+-\d+-g)?([0-9a-f]{7,})(?:-dirty)?", lines[1])
    known = git and subprocess.run(["git", "-C", SOURCE_DIR, "cat-file", "-e", git.group(1) + "^{commit}"]).returncode == 0
    check(known, f"--version names a commit of this repository ({lines[1]})")
    check(re.fullmatch(r"sluice 0\.1\.0~git\d+\.g" + git.group(1) + r"(\.dirty)?", lines[0]) or "~git" not in lines[0],
          "before the first tag the version is 0.1.0~git<commits>.g<hash>, as the package's")
else:
    check(lines[1].startswith("git: none"), "outside a git checkout --version says so")
sanitized = "SLUICE_SANITIZE:BOOL=ON" in open(binary("CMakeCache.txt")).read()
check(("sanitizers=address,undefined" in lines[2]) == sanitized, "--version says whether the build has the sanitizers")
r = run("--help")
check(r.returncode == 0 and "--config" in r.stdout and "--check-config" in r.stdout, "--help lists the options")
r = run("--print-default-config")
check(r.returncode == 0 and "rtmp:" in r.stdout and "live" in r.stdout, "--print-default-config prints YAML")
default_path = os.path.join(d, "default.yaml")
open(default_path, "w").write(r.stdout)
r = run("--check-config", default_path)
check(r.returncode == 0, "the printed default configuration validates")

bad = os.path.join(d, "bad.yaml")
open(bad, "w").write("rtmp:\n  listen: 127.0.0.1:1935\n  chunk_size: 0\napps:\n  live: { type: live, gop_cahce: true }\n")
r = run("--check-config", bad)
print(r.stderr)
check(r.returncode != 0, "--check-config fails on a bad file")
check("bad.yaml:3:" in r.stderr and "rtmp.chunk_size" in r.stderr, "error names file, line and key (chunk_size)")
check("bad.yaml:5:" in r.stderr and "gop_cahce" in r.stderr and "unknown key" in r.stderr,
      "unknown key is an error naming file, line and key")
r = run("--config", bad)
check(r.returncode != 0 and "chunk_size" in r.stderr, "the server refuses to start with a bad file")

# The port is taken: start-up fails with a clear message.
busy = socket.socket()
busy.bind(("127.0.0.1", 0))
busy.listen(1)
port = busy.getsockname()[1]
cfg = os.path.join(d, "busy.yaml")
open(cfg, "w").write(f"rtmp:\n  listen: 127.0.0.1:{port}\napps:\n  live: {{ type: live }}\n")
r = run("--config", cfg)
check(r.returncode != 0 and f"127.0.0.1:{port}" in r.stdout + r.stderr, "an address in use is reported")
busy.close()

# SIGINT: clean stop, exit 0.
server = Server("cli-sigint").start()
server.proc.send_signal(signal.SIGINT)
server.proc.wait(timeout=10)
check(server.proc.returncode == 0, "SIGINT stops the server with status 0")
check("event=signal signal=SIGINT" in server.log_text(), "the stop is logged")
print("PASS")
