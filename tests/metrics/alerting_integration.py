#!/usr/bin/env python3
"""A GPU lost on a node reaches a webhook through the real daemons.

`hwaccel serve --fixture` replays a DGX H100 whose timeline loses GPU 7 (Xid
79, then the GPU gone from the bus), with `--baseline` its first state's
inventory. A real Prometheus (Debian's `prometheus`) scrapes it every second
and evaluates deploy/prometheus/alerts.yml; a real Alertmanager (Debian's
`prometheus-alertmanager`, clustering off) routes the alerts to a webhook
receiver this test runs. Everything listens on 127.0.0.1 at free ports and
is stopped at the end, pass or fail. The webhook's payload must name the
node and the device; the missing-accelerator alert must be pending (its
`for: 1m` is not waited out).

    alerting_integration.py HWACCEL PROMETHEUS ALERTMANAGER SOURCE_DIR
"""

import http.server
import json
import pathlib
import queue
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from loopback import free_port_on, start_serve, stop_all  # noqa: E402

FIXTURE = "fixtures/machines/dgx-h100-busy-gpu-falls-off"
NODE = "dgx-h100-busy"


def wait_for(what: str, check, seconds: float, logs: list):
    deadline = time.time() + seconds
    last = None
    while time.time() < deadline:
        try:
            last = check()
            if last:
                return last
        except OSError as e:
            last = e
        time.sleep(0.25)
    tails = "\n".join(f"--- {p.name}:\n{p.read_text()[-1500:]}" for p in logs if p.exists())
    raise RuntimeError(f"{what}: not after {seconds} s (last: {last})\n{tails}")


def get_json(url: str):
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.load(r)


class Webhook(http.server.BaseHTTPRequestHandler):
    received: "queue.Queue[dict]" = queue.Queue()

    def do_POST(self):  # noqa: N802 (the http.server name)
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(min(length, 1 << 20))
        try:
            Webhook.received.put(json.loads(body))
        except ValueError:
            Webhook.received.put({"unparsable": body[:200].decode(errors="replace")})
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def main() -> int:
    hwaccel, prometheus, alertmanager, source = sys.argv[1], sys.argv[2], sys.argv[3], pathlib.Path(sys.argv[4])
    procs = []
    webhook = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Webhook)
    threading.Thread(target=webhook.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory(prefix="hwaccel-alerting-") as tmp:
        tmp_path = pathlib.Path(tmp)
        logs = [tmp_path / n for n in ("serve.log", "prometheus.log", "alertmanager.log")]
        try:
            baseline = tmp_path / "baseline.json"
            with open(baseline, "w") as out:
                subprocess.run([hwaccel, "detect", "--fixture", str(source / FIXTURE), "--json"], stdout=out, check=True,
                               timeout=60)
            serve, serve_port = start_serve(hwaccel, ["--listen", "127.0.0.1:0", "--fixture", str(source / FIXTURE),
                                                      "--baseline", str(baseline)], logs[0])
            procs.append(serve)

            am_port = free_port_on()
            am_config = tmp_path / "alertmanager.yml"
            am_config.write_text(
                "route:\n  receiver: hook\n  group_by: [alertname, device]\n"
                "  group_wait: 1s\n  group_interval: 1s\n  repeat_interval: 1h\n"
                "receivers:\n  - name: hook\n    webhook_configs:\n"
                f"      - url: 'http://127.0.0.1:{webhook.server_address[1]}/'\n        send_resolved: false\n")
            am_log = open(logs[2], "w")
            procs.append(subprocess.Popen(
                [alertmanager, f"--config.file={am_config}", f"--storage.path={tmp_path / 'am-data'}",
                 f"--web.listen-address=127.0.0.1:{am_port}", "--cluster.listen-address=", "--log.level=warn"],
                stdout=am_log, stderr=am_log))

            prom_port = free_port_on()
            config = tmp_path / "prometheus.yml"
            config.write_text(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                f"rule_files:\n  - '{source / 'deploy' / 'prometheus' / 'alerts.yml'}'\n"
                "alerting:\n  alertmanagers:\n    - static_configs:\n"
                f"        - targets: ['127.0.0.1:{am_port}']\n"
                "scrape_configs:\n  - job_name: hwaccel\n    scrape_interval: 1s\n"
                f"    static_configs:\n      - targets: ['127.0.0.1:{serve_port}']\n        labels: {{node: {NODE}}}\n")
            prom_log = open(logs[1], "w")
            procs.append(subprocess.Popen(
                [prometheus, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
                 f"--web.listen-address=127.0.0.1:{prom_port}", "--log.level=warn"],
                stdout=prom_log, stderr=prom_log))

            started = time.time()
            payload = wait_for("the Xid 79 alert at the webhook", lambda: Webhook.received.get_nowait()
                               if not Webhook.received.empty() else None, 90, logs)
            alerts = payload.get("alerts", [])
            xid = [a for a in alerts if a["labels"].get("alertname") == "HwaccelCriticalHealthEvent"]
            assert xid, f"the webhook got {payload}"
            labels = xid[0]["labels"]
            assert labels.get("node") == NODE and labels.get("device") == "cuda:7", labels
            assert labels.get("code") == "79" and labels.get("severity") == "critical", labels
            assert "cuda:7" in xid[0]["annotations"]["summary"], xid[0]["annotations"]
            delivered = time.time() - started

            # The lost GPU, against the baseline: 7 of 8, pending its minute.
            def missing():
                body = get_json(f"http://127.0.0.1:{prom_port}/api/v1/alerts")
                return [a for a in body["data"]["alerts"] if a["labels"]["alertname"] == "HwaccelAcceleratorMissing"]
            pending = wait_for("HwaccelAcceleratorMissing pending", missing, 30, logs)
            assert pending[0]["labels"]["node"] == NODE and float(pending[0]["value"]) == 7, pending
            print(f"Alertmanager delivered HwaccelCriticalHealthEvent for {labels['device']} on {labels['node']} "
                  f"{delivered:.1f} s after Prometheus started; HwaccelAcceleratorMissing is {pending[0]['state']} "
                  f"at {pending[0]['value']} accelerators")
            return 0
        finally:
            stop_all(procs)
            webhook.shutdown()


if __name__ == "__main__":
    sys.exit(main())
