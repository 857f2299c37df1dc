#!/usr/bin/python3
"""Writes the package's /etc/sluice/sluice.yaml: the embedded default as `sluice
--print-default-config` prints it, with its relative paths moved under /var/lib/sluice (relative
paths resolve against the file's directory, /etc/sluice, which the service may not write).

usage: packaged_config.py SLUICE_BINARY OUTPUT"""
import re
import subprocess
import sys

binary, output = sys.argv[1], sys.argv[2]
text = subprocess.run([binary, "--print-default-config"], check=True, capture_output=True, text=True).stdout
# Every path key of the default that is relative: a new one must be added here, not left relative.
text, moved = re.subn(r"^(\s+root:\s+)\./vod\b", r"\1/var/lib/sluice/vod", text, flags=re.M)
if moved != 1:
    sys.exit("packaged_config.py: the default's vod root is no longer ./vod; update this script")
relative = re.findall(r"^\s*(?:root|record_path|dir|path):\s+(?!/)\S.*$", text, flags=re.M)
if relative:
    sys.exit("packaged_config.py: relative paths left in the default: " + "; ".join(relative))
header = ("# /etc/sluice/sluice.yaml: Sluice's configuration, read by sluice.service (docs/deploy.md).\n"
          "# Saving it reloads it without dropping anyone (as `sudo systemctl reload sluice` does); what\n"
          "# needs a restart is refused and logged (docs/configuration.md, \"Reload\"). Check it first with\n"
          "# `sluice --check-config /etc/sluice/sluice.yaml`.\n"
          "# The service may write only under /var/lib/sluice: put recordings (record_path) and VOD roots\n"
          "# there. Ports under 1024 work: the unit grants CAP_NET_BIND_SERVICE.\n#\n")
with open(output, "w") as f:
    f.write(header + text)
