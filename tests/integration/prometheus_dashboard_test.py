#!/usr/bin/python3
"""deploy/prometheus/ and deploy/grafana/sluice.json against a running Sluice and Debian's
Prometheus (deploy/grafana/README.md):
  - Sluice with an API token (http.api.token_file), ffmpeg publishing live/cam (testsrc2 320x240 at
    25 fps, a keyframe every 2 s, AAC), an RTMP player and an HTTP-FLV player (curl) on it; /metrics
    answers 401 without the token;
  - `prometheus` on a free port of 127.0.0.1 with deploy/prometheus/prometheus.yml, only its target,
    its intervals (1 s) and its two file paths (the rules, the token) rewritten; `promtool check
    config` accepts that file and `promtool check rules` the shipped rules, and `promtool test
    rules` passes deploy/prometheus/sluice_rules_test.yml, which fires every alert (labels and
    annotations as written out) and computes every recording rule;
  - after some scrapes: the job is up, every query of the dashboard (the template variables set to
    this server, live and live/cam; $__rate_interval 5s, $__interval 2s, $__range 30s) answers at
    least one sample through `promtool query instant`, none NaN; each template variable's
    label_values finds the value the test uses; every recording rule has a sample; every rule of
    the file loaded and evaluates (its health "ok" in /api/v1/rules); every sluice_* series the
    dashboard and the rules name is one the server's /metrics exports (the cluster's only on a
    node of a cluster);
  - the dashboard's structure: schema 38, every panel and query on the ${datasource} variable,
    unique panel ids, on the 24-column grid;
  - alerts: none of the stream ones is active while the stream flows; the publisher stopped
    (SIGSTOP) makes SluiceStreamNoMedia pending for live/cam, and killed (its connection closed,
    the RTMP player waiting) makes SluiceStreamPublisherGone pending and the first one go."""
import atexit
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from rtmp_client import RtmpClient  # noqa: E402

try:
    import yaml
except ImportError:
    skip("missing the Python yaml module (run tools/install-deps.sh test: python3-yaml)")
require_tools("ffmpeg", "curl", "prometheus", "promtool")

t_start = time.time()
PROM_DIR = os.path.join(SOURCE_DIR, "deploy", "prometheus")
DASHBOARD = os.path.join(SOURCE_DIR, "deploy", "grafana", "sluice.json")
RULES = os.path.join(PROM_DIR, "sluice_rules.yml")
RULES_TEST = os.path.join(PROM_DIR, "sluice_rules_test.yml")
TOKEN = "prometheus-test-token-0123456789"

hport = free_port()
tmp = workdir("prometheus")
token_path = os.path.join(tmp, "sluice_api_token")
with open(token_path, "w") as f:
    f.write(TOKEN + "\n")  # as `openssl rand -hex 32 > file` writes it: both ends trim the newline
server = Server("prometheus-dashboard",
                extra_yaml=f"http:\n  listen: 127.0.0.1:{hport}\n  api:\n    token_file: {token_path}\n").start()
check(wait_port(hport), "the HTTP listener is up")
target = f"127.0.0.1:{hport}"


def http_get(url, headers=None, timeout=10):
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")
    except OSError as e:  # refused, reset, timed out
        return None, str(e)


status, _ = http_get(f"http://{target}/metrics")
check(status == 401, f"/metrics without the token: 401 ({status})")

publisher = subprocess.Popen(
    ["ffmpeg", "-nostdin", "-loglevel", "error", "-re", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25",
     "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100", "-c:v", "libx264", "-preset", "ultrafast",
     "-tune", "zerolatency", "-g", "50", "-keyint_min", "50", "-sc_threshold", "0", "-b:v", "300k",
     "-c:a", "aac", "-b:a", "64k", "-f", "flv", server.url("live/cam")],
    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def kill_if_running(proc):
    if proc.poll() is None:
        proc.kill()
        proc.wait()


# A failed check exits the test at once: the clients must not outlive it (a stopped one neither).
atexit.register(kill_if_running, publisher)
check(wait_for(lambda: "event=publish app=live stream=cam" in server.log_text(), 10), "ffmpeg publishes live/cam")

# An RTMP player: it stays when the publisher goes, so the stream stays known with a player waiting.
player = RtmpClient(server.port)
player.connect("live")
player.create_stream()
player.play("cam")
stop_reading = threading.Event()


def read_player():
    while not stop_reading.is_set() and not player.closed:
        player.read_some(0.1)
        player.messages.clear()


reader = threading.Thread(target=read_player, daemon=True)
reader.start()
flv_player = subprocess.Popen(["curl", "-s", "-o", os.devnull, f"http://{target}/live/cam.flv"])
atexit.register(kill_if_running, flv_player)

# Prometheus on the shipped configuration: the target, the intervals and the file paths rewritten.
shipped = yaml.safe_load(open(os.path.join(PROM_DIR, "prometheus.yml")))
jobs = [j for j in shipped["scrape_configs"] if j["job_name"] == "sluice"]
check(len(jobs) == 1 and jobs[0].get("metrics_path", "/metrics") == "/metrics",
      "the shipped configuration has one job `sluice` on /metrics")
check(os.path.basename(RULES) in shipped["rule_files"], f"... and loads {os.path.basename(RULES)}")
gen = shipped
gen["global"].update(scrape_interval="1s", scrape_timeout="1s", evaluation_interval="1s")
gen["rule_files"] = [os.path.join(PROM_DIR, p) for p in gen["rule_files"]]
job = jobs[0]
for key in ("scrape_interval", "scrape_timeout"):
    if key in job:
        job[key] = "1s"
job["authorization"]["credentials_file"] = token_path
job["static_configs"] = [{"targets": [target]}]
prom_config = os.path.join(tmp, "prometheus.yml")
with open(prom_config, "w") as f:
    yaml.safe_dump(gen, f)

p = subprocess.run(["promtool", "check", "config", prom_config], capture_output=True, text=True)
check(p.returncode == 0, f"promtool check config accepts the generated configuration ({(p.stdout + p.stderr).strip()})")
p = subprocess.run(["promtool", "check", "rules", RULES], capture_output=True, text=True)
check(p.returncode == 0, f"promtool check rules: {(p.stdout + p.stderr).strip()}")
# The rules' unit tests: every alert fires in one of them, every recording rule is computed.
rule_file = yaml.safe_load(open(RULES))
rule_tests = yaml.safe_load(open(RULES_TEST))
fired = {t["alertname"] for g in rule_tests["tests"] for t in g.get("alert_rule_test", []) if t["exp_alerts"]}
computed = {t["expr"] for g in rule_tests["tests"] for t in g.get("promql_expr_test", [])}
untested = [r.get("alert") or r.get("record") for g in rule_file["groups"] for r in g["rules"]
            if r.get("alert") not in fired and r.get("record") not in computed]
check(not untested, f"{os.path.basename(RULES_TEST)} fires every alert and computes every recording rule "
      f"({untested or 'all'})")
p = subprocess.run(["promtool", "test", "rules", RULES_TEST], capture_output=True, text=True)
check(p.returncode == 0, f"promtool test rules: {(p.stdout + p.stderr).strip()[-3000:]}")

pport = free_port()
prom_url = f"http://127.0.0.1:{pport}"
prom_log = open(os.path.join(tmp, "prometheus.log"), "w")
prom = subprocess.Popen(["prometheus", f"--config.file={prom_config}", f"--storage.tsdb.path={tmp}/data",
                         f"--web.listen-address=127.0.0.1:{pport}", "--log.level=warn"],
                        stdout=prom_log, stderr=subprocess.STDOUT)


atexit.register(kill_if_running, prom)


def prom_log_text():
    try:
        return open(os.path.join(tmp, "prometheus.log")).read()[-3000:]
    except OSError:
        return ""


def prom_api(path, **params):
    status, body = http_get(prom_url + path + ("?" + urllib.parse.urlencode(params) if params else ""))
    return json.loads(body) if status == 200 else None


check(wait_for(lambda: http_get(prom_url + "/-/ready", timeout=2)[0] == 200 if prom.poll() is None else True, 20)
      and prom.poll() is None, "prometheus is ready" + (":\n" + prom_log_text() if prom.poll() is not None else ""))


def scrapes():
    r = prom_api("/api/v1/query", query='count_over_time(up{job="sluice"}[1m]) and up{job="sluice"} == 1')
    res = (r or {}).get("data", {}).get("result", [])
    return int(float(res[0]["value"][1])) if res else 0


check(wait_for(lambda: scrapes() >= 6, 20), f"6 scrapes of the job, up (with the token); {scrapes()} so far")


def active_targets():
    r = prom_api("/api/v1/targets") or {"data": {"activeTargets": []}}
    return [(t["labels"]["instance"], t["health"], t["lastError"]) for t in r["data"]["activeTargets"]]


check(wait_for(lambda: [t[:2] for t in active_targets()] == [(target, "up")], 5),
      f"one target, this server, up ({active_targets()})")


def promtool_query(expr):
    """The samples `promtool query instant` answers: [(labels, value)]."""
    p = subprocess.run(["promtool", "query", "instant", "-o", "json", prom_url, expr], capture_output=True, text=True,
                       timeout=30)
    if p.returncode != 0:
        fail(f"promtool query instant {expr!r}: {p.stderr.strip()}")
    data = json.loads(p.stdout) if p.stdout.strip() else []
    if isinstance(data, dict):  # a scalar
        return [({}, float(data["value"][1]))]
    return [(s["metric"], float(s["value"][1])) for s in data]


# The dashboard.
dash = json.load(open(DASHBOARD))
check(dash.get("schemaVersion") == 38 and dash.get("uid") == "sluice", "the dashboard: schema 38, uid sluice")
variables = {v["name"]: v for v in dash["templating"]["list"]}
check(list(variables) == ["datasource", "job", "instance", "app", "stream"] and
      variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus",
      f"template variables: a Prometheus data source, job, instance, app, stream ({list(variables)})")
DS_REF = {"type": "prometheus", "uid": "${datasource}"}
panels = []
for pnl in dash["panels"]:
    panels.append(pnl)
    panels.extend(pnl.get("panels", []))
ids = [pnl["id"] for pnl in panels]
check(len(ids) == len(set(ids)), "unique panel ids")
queries = []  # (panel title, expr)
for pnl in panels:
    g = pnl["gridPos"]
    if not (g["x"] >= 0 and g["w"] > 0 and g["x"] + g["w"] <= 24 and g["h"] > 0):
        fail(f"panel {pnl['title']!r} is off the 24-column grid: {g}")
    if pnl["type"] == "row":
        continue
    if pnl.get("datasource") != DS_REF or any(t.get("datasource") != DS_REF for t in pnl["targets"]):
        fail(f"panel {pnl['title']!r} does not use the ${{datasource}} variable")
    queries += [(pnl["title"], t["expr"]) for t in pnl["targets"]]
check(len(queries) >= 40, f"{len(queries)} queries in {len(panels)} panels, every one on the ${{datasource}} variable")
values = {"job": "sluice", "instance": target, "app": "live", "stream": "live/cam",
          "__rate_interval": "5s", "__interval": "2s", "__range": "30s"}


def substitute(expr):
    def one(m):
        name = m.group(1) or m.group(2)
        if name not in values:
            fail(f"unknown variable ${name} in {expr!r}")
        return values[name]
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", one, expr)


for title, expr in queries:
    q = substitute(expr)
    samples = promtool_query(q)
    if not samples:
        fail(f"panel {title!r}: no data for {q}")
    if any(math.isnan(v) for _, v in samples):
        fail(f"panel {title!r}: NaN in {q}: {samples}")
check(True, f"every query of the dashboard answers data ({len(queries)} queries)")
# Some figures that must be more than there: the stream's health as ffmpeg sends it.
fps = promtool_query(f'sluice_stream_fps{{instance="{target}", stream="live/cam", track="video"}}')
check(len(fps) == 1 and abs(fps[0][1] - 25) <= 1, f"sluice_stream_fps of live/cam in Prometheus: 25 ({fps})")
players = promtool_query(f'sum(sluice_stream_players{{instance="{target}", stream="live/cam"}})')
check(players and players[0][1] == 2, f"two players of live/cam in Prometheus ({players})")

for name in ("job", "instance", "app", "stream"):
    v = variables[name]
    m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", v["definition"])
    check(m is not None and v["query"]["query"] == v["definition"], f"${name}: {v['definition']}")
    found = {s[0].get(m.group(2)) for s in promtool_query(f"count by ({m.group(2)}) ({substitute(m.group(1))})")}
    if v.get("regex"):
        rx = re.compile(v["regex"].strip("/").replace("\\/", "/"))
        found = {rx.match(x).group(1) for x in found if rx.match(x)}
    check(values[name] in found, f"... finds {values[name]} ({sorted(found)})")

# The rules: every one loaded and evaluated; the recording rules have data.
names = [(g["name"], r.get("alert") or r.get("record")) for g in rule_file["groups"] for r in g["rules"]]


def loaded_rules():
    r = prom_api("/api/v1/rules")
    return [(g["name"], r["name"], r["health"], r.get("lastError", "")) for g in r["data"]["groups"]
            for r in g["rules"]]


check(wait_for(lambda: all(h == "ok" for _, _, h, _ in loaded_rules()), 10) and
      sorted((g, n) for g, n, _, _ in loaded_rules()) == sorted(names),
      f"Prometheus loaded the {len(names)} rules and each evaluates "
      f"({[r for r in loaded_rules() if r[2] != 'ok'] or 'every health ok'})")
for g in rule_file["groups"]:
    for r in g["rules"]:
        if "record" in r and not promtool_query(r["record"]):
            fail(f"recording rule {r['record']}: no data")
        if "alert" in r and not ("for" in r and r["labels"].get("severity") in ("critical", "warning", "info")
                                 and r["annotations"].get("summary") and r["annotations"].get("description")):
            fail(f"alert {r['alert']}: needs for, a severity and a summary and description")
check(True, "every recording rule has data; every alert has for, a severity, a summary and a description")

# Only series Sluice exports: every sluice_* name of the dashboard and the rules is in /metrics.
_, metrics_text = http_get(f"http://{target}/metrics", {"Authorization": "Bearer " + TOKEN})
exported = set(re.findall(r"^# TYPE (\w+) ", metrics_text, re.M))
used = set()
for _, expr in queries:
    used |= set(re.findall(r"(?<![:\w])sluice_\w+", expr))
for g in rule_file["groups"]:
    for r in g["rules"]:
        used |= set(re.findall(r"(?<![:\w])sluice_\w+", r["expr"]))
cluster_only = {"sluice_cluster_registry_up", "sluice_cluster_registry_rtt_seconds", "sluice_cluster_streams_owned"}
check(not (used - exported - cluster_only),
      f"the {len(used)} sluice_* series the dashboard and the rules use are exported "
      f"({sorted(used - exported - cluster_only) or 'all'}; only on a cluster's nodes: {sorted(used & cluster_only)})")


def alerts(name):
    r = prom_api("/api/v1/alerts") or {"data": {"alerts": []}}
    return [(a["labels"].get("stream"), a["labels"].get("track"), a["state"]) for a in r["data"]["alerts"]
            if a["labels"]["alertname"] == name]


stream_alerts = ("SluiceStreamNoMedia", "SluiceStreamPublisherGone", "SluiceStreamLowFps",
                 "SluiceStreamKeyframeIntervalHigh")
active = {n: alerts(n) for n in stream_alerts}
check(not any(active.values()), f"no stream alert while the stream flows ({active})")

# The publisher stops sending: no media while it stays connected.
publisher.send_signal(signal.SIGSTOP)
check(wait_for(lambda: ("live/cam", "video", "pending") in alerts("SluiceStreamNoMedia"), 15),
      f"the publisher stopped: SluiceStreamNoMedia pending for live/cam's video ({alerts('SluiceStreamNoMedia')})")
# ... and is gone: the RTMP player waits for another.
publisher.kill()
publisher.wait()
check(wait_for(lambda: ("live/cam", None, "pending") in alerts("SluiceStreamPublisherGone") and
               not alerts("SluiceStreamNoMedia"), 10),
      f"the publisher gone: SluiceStreamPublisherGone pending for live/cam, SluiceStreamNoMedia over "
      f"({alerts('SluiceStreamPublisherGone')}, {alerts('SluiceStreamNoMedia')})")

stop_reading.set()
reader.join(timeout=5)
player.close()
stop_proc(flv_player)
kill_if_running(prom)
check(server.alive(), "the server is still running")
server.stop()
shutil.rmtree(tmp, ignore_errors=True)
print(f"INFO took {time.time() - t_start:.1f} s")
print("PASS")
