#!/usr/bin/env python3
"""Prometheus finds the exporters from hwaccel's own output.

Two `hwaccel serve --fixture` exporters listen on 127.0.0.2 and 127.0.0.3
(the whole of 127/8 is loopback on Linux) at one free port. Their registries,
named by those addresses, make a fleet document (`hwaccel fleet scan`); from
it `hwaccel fleet targets --output` writes a file_sd file, and a third
`hwaccel serve --fleet` answers GET /sd in the http_sd format. A real
Prometheus (Debian's) with one job of each kind must discover and scrape
both exporters, with the fleet's labels (host, backends, accelerators,
spec_ids). Every process is stopped at the end, pass or fail; nothing
outside 127.0.0.0/8 is addressed.

    service_discovery.py HWACCEL PROMETHEUS SOURCE_DIR
"""

import json
import pathlib
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from loopback import free_port_on, start_serve, stop_all  # noqa: E402

NODES = {"127.0.0.2": "fixtures/machines/dgx-h100-8x-nvswitch", "127.0.0.3": "fixtures/machines/amd-2x-mi210-pcie"}


def targets(prom_port: int) -> list:
    with urllib.request.urlopen(f"http://127.0.0.1:{prom_port}/api/v1/targets?state=active", timeout=5) as r:
        return json.load(r)["data"]["activeTargets"]


def main() -> int:
    hwaccel, prometheus, source = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
    procs = []
    with tempfile.TemporaryDirectory(prefix="hwaccel-sd-") as tmp:
        tmp_path = pathlib.Path(tmp)
        try:
            registries = tmp_path / "registries"
            registries.mkdir()
            for address, fixture in NODES.items():
                doc = json.loads(subprocess.run([hwaccel, "detect", "--fixture", str(source / fixture), "--json"],
                                                check=True, capture_output=True, text=True, timeout=60).stdout)
                doc["system"]["host"] = address
                (registries / f"{address}.json").write_text(json.dumps(doc))
            fleet = tmp_path / "fleet.json"
            fleet.write_text(subprocess.run([hwaccel, "fleet", "scan", str(registries)], check=True, capture_output=True,
                                            text=True, timeout=60).stdout)
            port = free_port_on(list(NODES))
            for address, fixture in NODES.items():
                procs.append(start_serve(hwaccel, ["--listen", f"{address}:{port}", "--fixture", str(source / fixture),
                                                   "--no-watch"], tmp_path / f"serve-{address}.log")[0])
            sd = tmp_path / "targets.json"
            subprocess.run([hwaccel, "fleet", "targets", str(fleet), "--port", str(port), "--output", str(sd)],
                           check=True, timeout=60)
            groups = json.loads(sd.read_text())
            assert sorted(g["targets"][0] for g in groups) == [f"{a}:{port}" for a in sorted(NODES)], groups
            discovery, sd_port = start_serve(hwaccel, ["--listen", "127.0.0.1:0", "--fixture", str(source / NODES["127.0.0.2"]),
                                                       "--no-watch", "--fleet", str(fleet), "--sd-port", str(port)],
                                             tmp_path / "serve-sd.log")
            procs.append(discovery)
            with urllib.request.urlopen(f"http://127.0.0.1:{sd_port}/sd", timeout=5) as r:
                assert json.load(r) == groups, "GET /sd differs from fleet targets"

            prom_port = free_port_on()
            config = tmp_path / "prometheus.yml"
            config.write_text(
                "global:\n  scrape_interval: 1s\n"
                "scrape_configs:\n"
                "  - job_name: hwaccel-file\n    scrape_interval: 1s\n"
                f"    file_sd_configs:\n      - files: ['{sd}']\n        refresh_interval: 1s\n"
                "  - job_name: hwaccel-http\n    scrape_interval: 1s\n"
                f"    http_sd_configs:\n      - url: 'http://127.0.0.1:{sd_port}/sd'\n        refresh_interval: 1s\n")
            log = open(tmp_path / "prometheus.log", "w")
            procs.append(subprocess.Popen(
                [prometheus, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
                 f"--web.listen-address=127.0.0.1:{prom_port}", "--log.level=warn"], stdout=log, stderr=log))
            deadline = time.time() + 90
            up = []
            while time.time() < deadline:
                try:
                    up = [t for t in targets(prom_port) if t["health"] == "up"]
                except OSError:
                    up = []
                if len(up) == 4:
                    break
                time.sleep(0.5)
            assert len(up) == 4, f"{len(up)} of 4 targets up: {up} / {(tmp_path / 'prometheus.log').read_text()[-1500:]}"
            for t in up:
                labels = t["labels"]
                host = labels["host"]
                assert labels["instance"] == f"{host}:{port}", labels
                want = {"127.0.0.2": ("cuda", "8"), "127.0.0.3": ("rocm", "2")}[host]
                assert (labels["backends"], labels["accelerators"]) == want, labels
                assert labels["spec_ids"], labels
            print(f"Prometheus discovered and scraped {len(up)} targets (file_sd and http_sd, 2 exporters each): "
                  + ", ".join(sorted(f"{t['labels']['job']} {t['labels']['instance']}" for t in up)))
            return 0
        finally:
            stop_all(procs)


if __name__ == "__main__":
    sys.exit(main())
