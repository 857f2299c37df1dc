#!/usr/bin/python3
"""deploy/kubernetes/sluice.yaml: every document parses; the Deployment runs 3 replicas with the
readiness probe on /readyz and the liveness probe on /healthz of the HTTP port, the pod name and IP
from the Downward API and the secrets from a Secret; and the container's own command, run here
with the pod's environment (paths moved to a temporary directory), renders the ConfigMap's
sluice.yaml into a configuration that `sluice --check-config` accepts, with node_id the pod name
and the advertised addresses the pod IP."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

try:
    import yaml
except ImportError:
    skip("missing the Python yaml module (run tools/install-deps.sh test: python3-yaml)")

manifest = os.path.join(SOURCE_DIR, "deploy", "kubernetes", "sluice.yaml")
docs = [d for d in yaml.safe_load_all(open(manifest)) if d]
kinds = {(d["kind"], d["metadata"]["name"]): d for d in docs}
check(set(kinds) == {("ConfigMap", "sluice-config"), ("Deployment", "sluice"), ("Service", "sluice"),
                     ("Deployment", "sluice-redis"), ("Service", "sluice-redis")},
      f"the manifest has the ConfigMap, both Deployments and both Services ({sorted(kinds)})")

dep = kinds[("Deployment", "sluice")]
check(dep["spec"]["replicas"] == 3, "3 replicas")
pod = dep["spec"]["template"]["spec"]
c = pod["containers"][0]
ports = {p["name"]: p["containerPort"] for p in c["ports"]}
check(ports == {"rtmp": 1935, "http": 8080}, f"container ports rtmp 1935 and http 8080 ({ports})")
check(c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}, "readiness probe: GET /readyz")
check(c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}, "liveness probe: GET /healthz")
env = {e["name"]: e.get("valueFrom", {}) for e in c["env"]}
check(env["POD_NAME"] == {"fieldRef": {"fieldPath": "metadata.name"}}, "POD_NAME from metadata.name")
check(env["POD_IP"] == {"fieldRef": {"fieldPath": "status.podIP"}}, "POD_IP from status.podIP")
check(env["SLUICE_REDIS_PASSWORD"].get("secretKeyRef", {}).get("name") == "sluice-secrets",
      "the Redis password comes from the Secret")
redis_env = kinds[("Deployment", "sluice-redis")]["spec"]["template"]["spec"]["containers"][0]["env"]
check(redis_env[0]["valueFrom"]["secretKeyRef"] == env["SLUICE_REDIS_PASSWORD"]["secretKeyRef"],
      "Redis requires the same password")
svc_ports = {p["name"]: p["port"] for p in kinds[("Service", "sluice")]["spec"]["ports"]}
check(svc_ports == {"rtmp": 1935, "http": 8080}, "the Service exposes 1935 and 8080")

# The container's command, as the pod runs it, with its two directories moved here and the final
# exec checking the configuration instead of serving it.
d = workdir("deploy")
etc, run = os.path.join(d, "etc"), os.path.join(d, "run")
os.makedirs(etc)
os.makedirs(run)
with open(os.path.join(etc, "sluice.yaml"), "w") as f:
    f.write(kinds[("ConfigMap", "sluice-config")]["data"]["sluice.yaml"])
check(c["command"] == ["/bin/sh", "-c"] and len(c["args"]) == 1, "the container runs one shell command")
script = c["args"][0].replace("/etc/sluice", etc).replace("/run/sluice", run)
check("exec sluice --config " in script, "the command ends by starting sluice on the rendered file")
script = script.replace("exec sluice --config ", "exec " + binary("server/sluice") + " --check-config ")
pod_env = dict(os.environ, POD_NAME="sluice-7d9f8-abcde", POD_IP="10.244.1.17",
               SLUICE_REDIS_PASSWORD="redis-secret", SLUICE_CLUSTER_TOKEN="cluster-token")
r = subprocess.run(["/bin/sh", "-c", script], env=pod_env, capture_output=True, text=True, timeout=30)
print(r.stdout + r.stderr)
check(r.returncode == 0, "sluice --check-config accepts the rendered sluice.yaml")
check("node_id: sluice-7d9f8-abcde" in r.stdout, "node_id is the pod name")
check("rtmp://10.244.1.17:1935" in r.stdout and "http://10.244.1.17:8080" in r.stdout,
      "the advertised addresses are the pod IP")
check("redis-secret" not in r.stdout and "cluster-token" not in r.stdout, "the printed settings hide the secrets")
r = subprocess.run(["/bin/sh", "-c", script], env=dict(pod_env, SLUICE_CLUSTER_TOKEN=""), capture_output=True,
                   text=True, timeout=30)
check(r.returncode != 0, "without the cluster token from the Secret the configuration is refused")
print("PASS")
