#!/usr/bin/python3
"""RTMPS certificate reload (docs/tls.md): when the certificate and key files change, new TLS
handshakes get the new certificate within a few seconds, while a player connected over TLS before
the change goes on playing; a broken new pair keeps the certificate in use (with an error line);
SIGHUP reloads at once, on every loop."""
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg", "openssl")

tmp = workdir("rtmps_reload")
cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")


def make_pair(cn, cert_path, key_path):
    p = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN={cn}",
                        "-addext", "subjectAltName=DNS:localhost", "-keyout", key_path, "-out", cert_path],
                       capture_output=True)
    check(p.returncode == 0, f"openssl made a certificate {cn}")


def install(cn):
    """Writes a new pair beside the files and moves it into place (as certbot's renewals do)."""
    make_pair(cn, cert + ".new", key + ".new")
    os.replace(key + ".new", key)
    os.replace(cert + ".new", cert)


def served_subject(port):
    p = subprocess.run(f"openssl s_client -connect 127.0.0.1:{port} -servername localhost </dev/null 2>/dev/null | "
                       "openssl x509 -noout -subject", shell=True, capture_output=True, text=True, timeout=20)
    return p.stdout.strip()



make_pair("first", cert, key)
tport = free_port()
server = Server("rtmps_reload", extra_yaml=f"rtmps: {{ listen: 127.0.0.1:{tport}, cert: {cert}, key: {key} }}\nworkers: 2\n").start()
check(wait_port(tport), "the RTMPS listener accepts")
src = make_media(os.path.join(tmp, "src.flv"), seconds=30)
try:
    check("first" in served_subject(tport), "the first certificate is served")
    pub = publish_ffmpeg(src, f"rtmps://127.0.0.1:{tport}/live/cam")
    time.sleep(1.5)
    out = os.path.join(tmp, "through.flv")
    player = subprocess.Popen(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", f"rtmps://127.0.0.1:{tport}/live/cam",
                               "-t", "10", "-c", "copy", "-f", "flv", "-y", out], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    time.sleep(1)
    install("second")
    check(wait_for(lambda: "second" in served_subject(tport), 8), "after the files change, new handshakes get the new one")
    # Two handshakes in a row: the connections go to both loops in turn, and both loops reloaded.
    check(all("second" in served_subject(tport) for _ in range(4)), "on every loop")

    # A broken pair (a key that is not a key) keeps the one in use.
    with open(key, "w") as f:
        f.write("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n")
    check(wait_for(lambda: "event=tls_reload_failed" in server.log_text(), 8), "a broken pair is refused with a log line")
    check("second" in served_subject(tport), "and the certificate in use stays")

    # SIGHUP reloads at once (here: back to a good pair made meanwhile).
    make_pair("third", cert + ".new", key + ".new")
    os.replace(key + ".new", key)
    os.replace(cert + ".new", cert)
    server.proc.send_signal(signal.SIGHUP)
    check(wait_for(lambda: "third" in served_subject(tport), 3), "SIGHUP loads the new pair")
    check('why="SIGHUP"' in server.log_text(), "the log says SIGHUP reloaded it")

    player.wait(timeout=30)
    check(player.returncode == 0, "the player connected before the changes played on over TLS")
    check_same_packets("player across the reloads", out, flv_tags(src), min_video=200, min_audio=200)
    stop_proc(pub)
    check(server.alive(), "the server still runs")
    print("rtmps_reload_test: OK")
finally:
    server.stop()
