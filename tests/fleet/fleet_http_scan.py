#!/usr/bin/env python3
"""`hwaccel fleet scan --subnet` and `--urls` against real exporters.

Three `hwaccel serve --fixture` exporters listen on 127.0.0.2, 127.0.0.3 and
127.0.0.4 (the whole 127/8 is loopback on Linux) at one free port, the last
with basic auth. A sweep of 127.0.0.0/28 finds the three and counts the
eleven silent addresses in one warning; `--urls` names one exporter and one
silent address, which becomes a node error; without the credentials the
third node is an error; a subnet larger than a /16 is refused before
anything is asked. Nothing outside 127.0.0.0/8 is addressed; every exporter
is stopped at the end, pass or fail.

    fleet_http_scan.py HWACCEL FIXTURES_DIR
"""

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from loopback import free_port_on, start_serve, stop_all  # noqa: E402

NODES = {"127.0.0.2": "dgx-h100-8x-nvswitch", "127.0.0.3": "amd-2x-mi210-pcie", "127.0.0.4": "h200-sxm-telemetry-idle-driver-580"}
AUTHED = "127.0.0.4"


def scan(hwaccel, *args):
    r = subprocess.run([hwaccel, "fleet", "scan", *args, "--deadline-ms", "3000", "--concurrency", "16"],
                       capture_output=True, text=True, timeout=120)
    return r


def main() -> int:
    hwaccel, fixtures = sys.argv[1], pathlib.Path(sys.argv[2])
    procs = []
    with tempfile.TemporaryDirectory(prefix="hwaccel-http-scan-") as tmp:
        tmp_path = pathlib.Path(tmp)
        try:
            secret = tmp_path / "credentials"
            secret.write_text("scanner:s3cret-passw0rd\n")
            os.chmod(secret, 0o600)
            port = free_port_on(list(NODES))
            for address, fixture in NODES.items():
                args = ["--listen", f"{address}:{port}", "--fixture", str(fixtures / "machines" / fixture), "--no-watch"]
                if address == AUTHED:
                    args += ["--basic-auth-file", str(secret)]
                procs.append(start_serve(hwaccel, args, tmp_path / f"serve-{address}.log")[0])

            started = time.time()
            r = scan(hwaccel, "--subnet", "127.0.0.0/28", "--port", str(port), "--basic-auth-file", str(secret))
            swept_s = time.time() - started
            assert r.returncode == 0, r.stderr
            fleet = json.loads(r.stdout)
            answered = {n["host"]: n for n in fleet["nodes"]}
            assert sorted(answered) == sorted(NODES), fleet["nodes"]
            assert all(n.get("registry") for n in answered.values()), [n.get("error") for n in answered.values()]
            gpus = {h: sum(1 for d in n["registry"]["devices"] if d["backend"] != "cpu") for h, n in answered.items()}
            assert gpus == {"127.0.0.2": 8, "127.0.0.3": 2, "127.0.0.4": 1}, gpus
            assert "11 of 14 addresses answered nothing" in " ".join(fleet.get("warnings", [])), fleet.get("warnings")

            r = scan(hwaccel, "--subnet", "127.0.0.0/28", "--port", str(port))
            fleet = json.loads(r.stdout)
            errors = {n["host"]: n["error"] for n in fleet["nodes"] if n.get("error")}
            assert list(errors) == [AUTHED] and "401" in errors[AUTHED]["message"], errors

            r = scan(hwaccel, "--urls", f"127.0.0.2:{port},127.0.0.9:{port}")
            fleet = json.loads(r.stdout)
            by_host = {n["host"]: n for n in fleet["nodes"]}
            assert by_host["127.0.0.2"].get("registry") and by_host["127.0.0.9"].get("error"), fleet["nodes"]

            r = scan(hwaccel, "--subnet", "127.0.0.0/8", "--port", str(port))
            assert r.returncode == 2 and "larger than a /16" in r.stderr, (r.returncode, r.stderr)
            print(f"swept 127.0.0.0/28 in {swept_s:.2f} s: {len(NODES)} exporters answered ({gpus}), 11 silent; "
                  "basic auth, --urls and the /16 limit behave")
            return 0
        finally:
            stop_all(procs)


if __name__ == "__main__":
    sys.exit(main())
