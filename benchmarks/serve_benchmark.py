#!/usr/bin/env python3
"""`hwaccel serve` over HTTP (docs/benchmarks.md, "Exporter"): the latency of
scrapes of the 8-GPU fixture on one keep-alive connection (median of 2000),
and the server's resident memory after 1000 and after 10 000 scrapes (it must
not grow).

    serve_benchmark.py HWACCEL [FIXTURE]
"""

import http.client
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time


def rss_kib(pid: int) -> int:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def main() -> int:
    hwaccel = sys.argv[1]
    fixture = sys.argv[2] if len(sys.argv) > 2 else str(pathlib.Path(__file__).resolve().parents[1] /
                                                          "fixtures/machines/dgx-h100-8x-nvswitch")
    with tempfile.NamedTemporaryFile("w+") as log:
        proc = subprocess.Popen([hwaccel, "serve", "--listen", "127.0.0.1:0", "--fixture", fixture],
                                stdout=log, stderr=log)
        try:
            port = None
            for _ in range(600):
                log.seek(0)
                m = re.search(r"127\.0\.0\.1:(\d+)", log.read())
                if m:
                    port = int(m.group(1))
                    break
                time.sleep(0.05)
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            times = []
            rss_1k = 0
            for i in range(10_000):
                start = time.perf_counter()
                conn.request("GET", "/metrics")
                body = conn.getresponse().read()
                times.append(time.perf_counter() - start)
                if i == 999:
                    rss_1k = rss_kib(proc.pid)
            rss_10k = rss_kib(proc.pid)
            first = sorted(times[:2000])
            print(f"HTTP scrape of the 8-GPU fixture ({len(body)} bytes): median {statistics.median(first) * 1e6:.0f} us, "
                  f"p99 {first[int(len(first) * 0.99)] * 1e6:.0f} us (2000 scrapes, one keep-alive connection)")
            print(f"RSS after 1000 scrapes {rss_1k / 1024:.1f} MiB, after 10000 {rss_10k / 1024:.1f} MiB")
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
