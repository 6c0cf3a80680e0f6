#!/usr/bin/env python3
"""A real Prometheus server scrapes `hwaccel serve` on loopback.

Starts `hwaccel serve --fixture <8-GPU node>` and a Prometheus (Debian's
`prometheus`, a temporary data folder, a 1 s scrape interval) on free
loopback ports, waits for the scrapes, and reads the series back through
Prometheus' HTTP query API: the values must equal the fixture's nvidia-smi
output, read here independently. Then every panel of the Grafana dashboard
(deploy/grafana/hwaccel-dashboard.json) is queried and must return data.
Both processes are stopped at the end, pass or fail.

    prometheus_integration.py HWACCEL PROMETHEUS SOURCE_DIR
"""

import csv
import json
import pathlib
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from loopback import stop_all  # noqa: E402

FIXTURE = "fixtures/machines/dgx-h100-8x-nvswitch"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_serve(hwaccel: str, fixture: pathlib.Path, log: pathlib.Path) -> tuple:
    out = open(log, "w")
    proc = subprocess.Popen([hwaccel, "serve", "--listen", "127.0.0.1:0", "--fixture", str(fixture)],
                            stdout=out, stderr=out)
    deadline = time.time() + 30
    while time.time() < deadline:
        m = re.search(r"http://127\.0\.0\.1:(\d+)/metrics", log.read_text())
        if m:
            return proc, int(m.group(1))
        if proc.poll() is not None:
            raise RuntimeError(f"hwaccel serve exited: {log.read_text()}")
        time.sleep(0.05)
    raise RuntimeError("hwaccel serve did not say where it listens")


def query(port: int, expr: str) -> list:
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError(f"query {expr!r}: {body}")
    return body["data"]["result"]


def expected_from_fixture(source: pathlib.Path) -> dict:
    """bus id -> the values nvidia-smi printed, read without hwaccel."""
    text = (source / FIXTURE / "commands" / "nvidia-smi-telemetry.out").read_text().splitlines()
    rows = list(csv.reader(text, skipinitialspace=True))
    names = [h.split(" [")[0].strip() for h in rows[0]]
    out = {}
    for row in rows[1:]:
        values = dict(zip(names, (c.strip() for c in row)))
        bus = values["pci.bus_id"].lower()[4:]  # 00000000:18:00.0 -> 0000:18:00.0
        out[bus] = values
    return out


def main() -> int:
    hwaccel, prometheus, source = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
    procs = []
    with tempfile.TemporaryDirectory(prefix="hwaccel-prometheus-") as tmp:
        tmp_path = pathlib.Path(tmp)
        try:
            serve, serve_port = start_serve(hwaccel, source / FIXTURE, tmp_path / "serve.log")
            procs.append(serve)
            prom_port = free_port()
            config = tmp_path / "prometheus.yml"
            config.write_text(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                "scrape_configs:\n  - job_name: hwaccel\n    scrape_interval: 1s\n"
                f"    static_configs:\n      - targets: ['127.0.0.1:{serve_port}']\n")
            prom_log = open(tmp_path / "prometheus.log", "w")
            procs.append(subprocess.Popen(
                [prometheus, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
                 f"--web.listen-address=127.0.0.1:{prom_port}", "--log.level=warn"],
                stdout=prom_log, stderr=prom_log))

            # Wait for a scrape that carries every GPU's utilization.
            deadline = time.time() + 90
            series = []
            while time.time() < deadline:
                try:
                    series = query(prom_port, "hwaccel_device_utilization_ratio")
                except OSError:
                    series = []
                if len(series) == 8:
                    break
                time.sleep(0.5)
            if len(series) != 8:
                raise RuntimeError(f"Prometheus has {len(series)} utilization series after 90 s; "
                                   f"its log: {(tmp_path / 'prometheus.log').read_text()[-2000:]}")
            up = query(prom_port, 'up{job="hwaccel"}')
            assert up and up[0]["value"][1] == "1", f"up: {up}"

            expected = expected_from_fixture(source)
            checks = [
                ("hwaccel_device_utilization_ratio", lambda v: float(v["utilization.gpu"]) / 100),
                ("hwaccel_device_memory_used_bytes", lambda v: float(v["memory.used"]) * 2**20),
                ('hwaccel_device_memory_total_bytes{backend="cuda"}', lambda v: float(v["memory.total"]) * 2**20),
                ("hwaccel_device_power_watts", lambda v: float(v["power.draw"])),
                ('hwaccel_device_temperature_celsius{sensor="gpu"}', lambda v: float(v["temperature.gpu"])),
                ('hwaccel_device_clock_hertz{clock="sm"}', lambda v: float(v["clocks.current.sm"]) * 1e6),
                ('hwaccel_device_ecc_errors_total{type="corrected",scope="aggregate"}',
                 lambda v: float(v["ecc.errors.corrected.aggregate.total"])),
            ]
            compared = 0
            for expr, value_of in checks:
                got = query(prom_port, expr)
                assert len(got) == 8, f"{expr}: {len(got)} series, expected 8"
                for s in got:
                    bus = s["metric"]["pci_bus_id"]
                    want = value_of(expected[bus])
                    have = float(s["value"][1])
                    assert abs(have - want) <= 1e-9 * max(1.0, abs(want)), f"{expr} {bus}: Prometheus {have}, fixture {want}"
                    compared += 1
            # nvidia-smi nvlink -e of the fixture: GPU 5's link 7 alone has errors.
            crc = query(prom_port, 'sum by (device) (hwaccel_device_link_errors_total{type="crc"}) > 0')
            assert [(s["metric"]["device"], s["value"][1]) for s in crc] == [("cuda:5", "14")], crc
            active = query(prom_port, "hwaccel_device_clock_event_reason_active == 1")
            assert {(s["metric"]["device"], s["metric"]["reason"]) for s in active} == {
                ("cuda:4", "gpu_idle"), ("cuda:6", "sw_power_cap")}, active

            # Every dashboard panel's PromQL returns data.
            dashboard = json.loads((source / "deploy" / "grafana" / "hwaccel-dashboard.json").read_text())
            empty = []
            for panel in dashboard["panels"]:
                for target in panel["targets"]:
                    expr = target["expr"].replace("$instance", ".*")
                    if not query(prom_port, expr):
                        empty.append(f"{panel['title']}: {expr}")
            assert not empty, "dashboard panels without data: " + "; ".join(empty)
            print(f"Prometheus scraped hwaccel serve: {compared} values equal the fixture's; "
                  f"{len(dashboard['panels'])} dashboard panels return data")
            return 0
        finally:
            stop_all(procs)


if __name__ == "__main__":
    sys.exit(main())
