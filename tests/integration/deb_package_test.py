#!/usr/bin/python3
"""The Debian package (`make deb`, cmake/SluicePackage.cmake, docs/deploy.md), packed by CPack from
the build at hand: CI builds only build/asan, so the package holds its ASan binary here. `make deb`
packs build/release with the same CPack configuration and install rules, so everything but the
binary is what users get; a release build only for this test would add minutes of compiling.
1. cpack -G DEB into a temporary folder: sluice_<version>_amd64.deb, the version `sluice --version`
   of the build prints.
2. dpkg-deb: the files promised (binary, conffile, unit, /var/lib/sluice, man page, docs), the
   control fields (Depends has adduser and the libraries), conffiles, the maintainer scripts.
3. lintian: no error, and no warning but those docs/deploy.md lists and justifies.
4. dpkg -x into a temporary root: the packaged binary with the packaged configuration (its ports
   moved, /var/lib/sluice moved into the root) serves the page and a file from vod/ byte-exact.
5. systemd-analyze verify the unit, with the root's binary in place of /usr/bin/sluice.
6. The image recipe (deploy/docker): it installs what `make deb` writes, runs as the package's
   user with its configuration, and compose and the Kubernetes manifest use the same image name;
   compose's cluster.yaml, rendered as its command does, passes --check-config. No image is built:
   these machines cannot pull base images (deploy/README.md)."""
import glob
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

# What lintian may say, each justified in docs/deploy.md ("lintian"). Anything else fails.
ALLOWED_WARNINGS = set()

require_tools("cpack", "dpkg-deb", "lintian", "systemd-analyze", "ffmpeg")
d = workdir("deb")
build = os.path.abspath(BUILD_DIR)
source = os.path.abspath(SOURCE_DIR)


def run(cmd, timeout=300, **kw):
    started = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    print(f"$ {' '.join(cmd)}  ({time.time() - started:.1f} s, status {r.returncode})", flush=True)
    return r


# 1. The package.
r = run(["cpack", "--config", os.path.join(build, "CPackConfig.cmake"), "-G", "DEB", "-B", os.path.join(d, "out")])
if r.returncode != 0:
    fail("cpack failed:\n" + r.stdout + r.stderr)
debs = glob.glob(os.path.join(d, "out", "*.deb"))
check(len(debs) == 1, f"cpack wrote one .deb ({[os.path.basename(p) for p in debs]})")
deb = debs[0]
version = run([binary("server/sluice"), "--version"]).stdout.split("\n")[0].removeprefix("sluice ")
check(os.path.basename(deb) == f"sluice_{version}_amd64.deb", f"it is sluice_{version}_amd64.deb, the binary's version")
print(f"package size: {os.path.getsize(deb) / 1e6:.1f} MB")

# 2. What it holds.
listing = run(["dpkg-deb", "-c", deb]).stdout
paths = {line.split()[-1].rstrip("/").removeprefix(".") for line in listing.splitlines() if line.strip()}
promised = ["/usr/bin/sluice", "/etc/sluice/sluice.yaml", "/usr/lib/systemd/system/sluice.service", "/var/lib/sluice",
            "/var/lib/sluice/vod", "/usr/share/man/man8/sluice.8.gz", "/usr/share/doc/sluice/copyright",
            "/usr/share/doc/sluice/changelog.gz", "/usr/share/doc/sluice/deploy.md.gz",
            "/usr/share/doc/sluice/configuration.md.gz", "/usr/share/doc/sluice/README.md.gz"]
missing = [p for p in promised if p not in paths]
check(not missing, f"dpkg-deb -c lists {len(promised)} promised paths (missing: {missing})")
binary_mode = [line for line in listing.splitlines() if line.endswith("./usr/bin/sluice")]
check(binary_mode and binary_mode[0].startswith("-rwxr-xr-x root/root"), f"the binary is root's, 0755 ({binary_mode})")
fields = run(["dpkg-deb", "-f", deb]).stdout
print(fields)
check(re.search(r"^Package: sluice$", fields, re.M) and re.search(r"^Architecture: amd64$", fields, re.M),
      "control: Package sluice, Architecture amd64")
depends = re.search(r"^Depends: (.*)$", fields, re.M)
check(depends and "adduser" in depends.group(1) and "libuv1" in depends.group(1) and "libsystemd0" in depends.group(1),
      "Depends: adduser and the libraries (dpkg-shlibdeps: libuv1, libsystemd0, ...)")
control = os.path.join(d, "control")
run(["dpkg-deb", "-e", deb, control])
check(open(os.path.join(control, "conffiles")).read().split() == ["/etc/sluice/sluice.yaml"],
      "conffiles: /etc/sluice/sluice.yaml")
postinst = open(os.path.join(control, "postinst")).read()
check("adduser --quiet --system --group" in postinst and "chown sluice:sluice /var/lib/sluice" in postinst,
      "postinst makes the sluice system user and gives it /var/lib/sluice")

# 3. lintian.
r = run(["lintian", "--tag-display-limit", "0", "--display-info", deb])
print(r.stdout + r.stderr)
tags = [line for line in r.stdout.splitlines() if re.match(r"^[EWIXOP]: ", line)]
errors = [t for t in tags if t.startswith("E: ")]
warnings = {t.split()[2] for t in tags if t.startswith("W: ")}
check(not errors, f"lintian: no error ({len(errors)})")
unexpected = sorted(warnings - ALLOWED_WARNINGS)
check(not unexpected, f"lintian: no warning besides those docs/deploy.md justifies (new: {unexpected})")

# 4. The packaged binary with the packaged configuration.
root = os.path.join(d, "root")
run(["dpkg", "-x", deb, root])
packaged = os.path.join(root, "usr/bin/sluice")
r = run([packaged, "--version"])
check(r.returncode == 0 and r.stdout.startswith(f"sluice {version}\n"), "the packaged binary runs (--version)")
yaml_text = open(os.path.join(root, "etc/sluice/sluice.yaml")).read()
check("/var/lib/sluice/vod" in yaml_text and "./" not in yaml_text, "the packaged configuration's VOD root is /var/lib/sluice/vod")
rtmp_port, http_port = free_port(), free_port()
moved = (yaml_text.replace("0.0.0.0:1935", f"127.0.0.1:{rtmp_port}").replace("0.0.0.0:8080", f"127.0.0.1:{http_port}")
         .replace("/var/lib/sluice", os.path.join(root, "var/lib/sluice")))
check(moved.count(f"127.0.0.1:{rtmp_port}") == 1 and moved.count(f"127.0.0.1:{http_port}") == 1,
      "the packaged configuration listens on 1935 and 8080 (moved to free ports here)")
config = os.path.join(d, "sluice.yaml")
open(config, "w").write(moved)
r = run([packaged, "--check-config", config])
check(r.returncode == 0, "the packaged configuration passes --check-config" + ("" if r.returncode == 0 else ":\n" + r.stderr))
movie = make_media(os.path.join(root, "var/lib/sluice/vod/movie.flv"), seconds=1)
log = open(os.path.join(d, "server.log"), "w")
proc = subprocess.Popen([packaged, "--config", config], stdout=log, stderr=subprocess.STDOUT, cwd=d)
atexit.register(lambda: proc.poll() is None and proc.kill())
if not (wait_port(rtmp_port) and wait_port(http_port)):
    fail("the packaged server did not listen; log:\n" + open(os.path.join(d, "server.log")).read())
page = urllib.request.urlopen(f"http://127.0.0.1:{http_port}/", timeout=10)
check(page.status == 200 and b"<html" in page.read().lower(), "it serves the page on the HTTP port")
body = urllib.request.urlopen(f"http://127.0.0.1:{http_port}/vod/movie.flv", timeout=10).read()
check(hashlib.md5(body).hexdigest() == hashlib.md5(open(movie, "rb").read()).hexdigest(),
      f"it serves vod/movie.flv from the packaged VOD root byte-exact ({len(body)} bytes)")
proc.send_signal(signal.SIGTERM)
check(proc.wait(timeout=15) == 0, "it stops with status 0 on SIGTERM")
log.close()

# 5. The unit. verify looks for ExecStart's binary: the root's copy, as /usr/bin/sluice would be.
unit = open(os.path.join(root, "usr/lib/systemd/system/sluice.service")).read()
for line in ["Type=notify", "ExecReload=/bin/kill -HUP $MAINPID", "User=sluice", "ProtectSystem=strict",
             "ReadWritePaths=/var/lib/sluice", "NoNewPrivileges=yes", "AmbientCapabilities=CAP_NET_BIND_SERVICE",
             "LimitNOFILE=1048576", "PrivateTmp=yes", "ProtectHome=yes"]:
    if line not in unit.split("\n"):
        fail(f"the unit lacks {line}")
check(True, "the unit is Type=notify, runs as sluice, reloads with SIGHUP and is hardened")
units = os.path.join(d, "units")
os.makedirs(units)
open(os.path.join(units, "sluice.service"), "w").write(unit.replace("/usr/bin/sluice", packaged))
r = run(["systemd-analyze", "verify", "--man=no", os.path.join(units, "sluice.service")])
print(r.stdout + r.stderr)
check(r.returncode == 0 and not (r.stdout + r.stderr).strip(), "systemd-analyze verify: the unit is clean")

# 6. The image recipe.
dockerfile = open(os.path.join(source, "deploy/docker/Dockerfile")).read()
stages = re.findall(r"^FROM (\S+)", dockerfile, re.M)
check(len(stages) == 2 and all(s.startswith("debian:12") for s in stages), f"Dockerfile: two Debian 12 stages ({stages})")
check(re.search(r"^RUN tools/install-deps.sh build && make deb$", dockerfile, re.M) is not None,
      "Dockerfile: the first stage runs make deb")
makefile = open(os.path.join(source, "Makefile")).read()
deb_dir = re.search(r"^DEB_DIR := (\S+)$", makefile, re.M).group(1)
check(f"COPY --from=build /src/{deb_dir}/sluice_*_amd64.deb /tmp/" in dockerfile,
      f"Dockerfile: the second stage installs what make deb writes ({deb_dir}/sluice_*_amd64.deb)")
check(re.search(r"^USER sluice$", dockerfile, re.M) and '"/etc/sluice/sluice.yaml"' in dockerfile,
      "Dockerfile: runs as the package's user, with the package's configuration")
import yaml  # noqa: E402
compose = yaml.safe_load(open(os.path.join(source, "deploy/docker/compose.yaml")))
images = {s.get("image") for name, s in compose["services"].items() if name.startswith("sluice")}
kube = [doc for doc in yaml.safe_load_all(open(os.path.join(source, "deploy/kubernetes/sluice.yaml"))) if doc]
kube_images = {c["image"] for doc in kube if doc["kind"] == "Deployment" and doc["metadata"]["name"] == "sluice"
               for c in doc["spec"]["template"]["spec"]["containers"]}
tag = re.search(r"docker build -f deploy/docker/Dockerfile -t (\S+) \.", dockerfile).group(1)
check(images == kube_images == {tag}, f"compose, the Kubernetes manifest and the Dockerfile's build line name one image ({tag})")
check("redis" in compose["services"], "compose has the Redis the cluster needs")
node_yaml = open(os.path.join(source, "deploy/docker/cluster.yaml")).read().replace("@NODE@", "sluice-a")
open(os.path.join(d, "node.yaml"), "w").write(node_yaml)
r = run([packaged, "--check-config", os.path.join(d, "node.yaml")],
        env=dict(os.environ, SLUICE_REDIS_PASSWORD="x", SLUICE_CLUSTER_TOKEN="y"))
check(r.returncode == 0, "compose's cluster.yaml, rendered, passes --check-config" + ("" if r.returncode == 0 else ":\n" + r.stderr))
shutil.rmtree(d, ignore_errors=True)
print("PASS")
