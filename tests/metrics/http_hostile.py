#!/usr/bin/env python3
"""`hwaccel serve` under hostile input, on loopback.

- malformed requests, oversized headers, a body, other methods: a 4xx, and
  the server keeps answering;
- a slow client that never finishes its request is dropped at the request
  timeout while others are served;
- 1000 concurrent scrapes: each gets a 200 or a 503 (over the connection
  limit, refused rather than queued), the server answers afterwards, and its
  resident memory stays under 64 MiB;
- a telemetry tool that hangs, floods or prints garbage during a scrape: the scrape
  comes back within the deadline with the other devices' series and a
  hwaccel_scrape_errors_total increment;
- HTTPS with basic auth: the right credentials get the metrics, none or wrong
  ones a 401, and a credentials file readable by others is refused.

    http_hostile.py HWACCEL SOURCE_DIR
"""

import json
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

FIXTURE = "fixtures/machines/dgx-h100-8x-nvswitch"


class Server:
    def __init__(self, hwaccel, fixture, log, *extra):
        self.log = log
        out = open(log, "w")
        self.proc = subprocess.Popen([hwaccel, "serve", "--listen", "127.0.0.1:0", "--fixture", str(fixture), *extra],
                                     stdout=out, stderr=out)
        deadline = time.time() + 30
        while time.time() < deadline:
            m = re.search(r"https?://127\.0\.0\.1:(\d+)/metrics", log.read_text())
            if m:
                self.port = int(m.group(1))
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"hwaccel serve exited: {log.read_text()}")
            time.sleep(0.05)
        raise RuntimeError("hwaccel serve did not start")

    def stop(self):
        self.proc.terminate()
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise RuntimeError("hwaccel serve did not stop on SIGTERM within 10 s")
        if code != 0:
            raise RuntimeError(f"hwaccel serve exited {code} on SIGTERM: {self.log.read_text()[-1000:]}")

    def rss_kib(self):
        for line in pathlib.Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def raw(self, data: bytes, timeout=10.0) -> bytes:
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as s:
            s.sendall(data)
            chunks = []
            try:
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    chunks.append(chunk)
            except (ConnectionResetError, socket.timeout):
                pass
            return b"".join(chunks)

    def get(self, path="/metrics", timeout=10.0) -> tuple:
        reply = self.raw(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode(), timeout)
        head, _, body = reply.partition(b"\r\n\r\n")
        status = int(head.split(b" ")[1]) if head.startswith(b"HTTP/1.1 ") else 0
        return status, body.decode(errors="replace")


def status_of(reply: bytes) -> int:
    return int(reply.split(b" ")[1]) if reply.startswith(b"HTTP/1.1 ") else 0


def check_malformed(server: Server) -> None:
    cases = [
        (b"\x00\xff\xfe garbage\r\n\r\n", 400),
        (b"GET /metrics HTTP/9.9\r\n\r\n", 400),
        (b"GET\r\n\r\n", 400),
        (b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 405),
        (b"DELETE /registry HTTP/1.1\r\nHost: x\r\n\r\n", 405),
        (b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789", 413),
        (b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n", 431),
        (b"GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 404),
    ]
    for request, want in cases:
        got = status_of(server.raw(request))
        assert got == want, f"{request[:40]!r}: status {got}, expected {want}"
    assert server.get("/healthz") == (200, "ok\n")


def check_slow_client(server: Server) -> None:
    slow = socket.create_connection(("127.0.0.1", server.port))
    slow.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # and never the end of it
    start = time.time()
    assert server.get("/healthz")[0] == 200  # others are served meanwhile
    slow.settimeout(10)
    try:
        leftover = slow.recv(100)  # the server closes it at its request timeout
    except ConnectionResetError:
        leftover = b""
    took = time.time() - start
    slow.close()
    assert leftover == b"" and took < 8, f"slow client kept {took:.1f} s ({leftover!r})"


def check_many_scrapes(server: Server, clients: int = 1000) -> None:
    statuses = []
    lock = threading.Lock()
    barrier = threading.Barrier(clients)

    def scrape():
        try:
            s = socket.create_connection(("127.0.0.1", server.port), timeout=30)
            barrier.wait(timeout=60)
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            s.close()
            code = status_of(data) if data else -1
        except (ConnectionResetError, BrokenPipeError):
            code = -1  # refused at the limit before the request was read
        except threading.BrokenBarrierError:
            code = -2
        with lock:
            statuses.append(code)

    threads = [threading.Thread(target=scrape) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    counts = {c: statuses.count(c) for c in set(statuses)}
    assert len(statuses) == clients, f"{clients - len(statuses)} scrapes never finished"
    assert set(counts) <= {200, 503, -1}, f"unexpected outcomes: {counts}"
    assert counts.get(200, 0) >= 64, f"fewer than 64 scrapes served: {counts}"
    assert server.get("/healthz") == (200, "ok\n")
    rss = server.rss_kib()
    assert rss < 64 * 1024, f"RSS {rss} KiB after {clients} concurrent scrapes"
    print(f"{clients} concurrent scrapes: {counts}; RSS {rss / 1024:.1f} MiB")


def broken_fixture(source: pathlib.Path, tmp: pathlib.Path, how: str) -> pathlib.Path:
    """The 8-GPU node whose telemetry query hangs, or prints garbage."""
    copy = tmp / f"node-{how}"
    shutil.copytree(source / FIXTURE, copy, symlinks=True)
    manifest = json.loads((copy / "fixture.json").read_text())
    for command in manifest["commands"]:
        if command["argv"][1].startswith("--query-gpu=pci.bus_id"):
            if how == "hang":
                command["hang"] = True
            elif how == "flood":
                # 40 MiB of rows: past the 4 MiB the sampler reads of a tool's output.
                (copy / "commands" / command["stdout"]).write_bytes(
                    b"pci.bus_id, utilization.gpu [%]\n" + b"00000000:18:00.0, 50\n" * 2_000_000)
            else:
                (copy / "commands" / command["stdout"]).write_bytes(b"\x00\x01garbage, [N/A]\n" * 5000)
    (copy / "fixture.json").write_text(json.dumps(manifest, indent=2))
    return copy


def check_broken_tool(hwaccel: str, source: pathlib.Path, tmp: pathlib.Path, how: str) -> None:
    extra = ["--timeout-ms", "1500", "--simulate-durations"] if how == "hang" else []
    server = Server(hwaccel, broken_fixture(source, tmp, how), tmp / f"serve-{how}.log", *extra)
    try:
        for scrape in (1, 2):
            start = time.time()
            status, body = server.get("/metrics", timeout=20)
            took = time.time() - start
            assert status == 200, f"{how}: status {status}"
            assert took < 5, f"{how}: a scrape took {took:.1f} s (deadline 1.5 s)"
            assert 'hwaccel_device_info{device="cuda:0"' in body and "hwaccel_device_memory_total_bytes{device=\"cpu:0\"" in body
            assert "hwaccel_device_utilization_ratio{" not in body, f"{how}: telemetry invented for a failed source"
            m = re.search(r'^hwaccel_scrape_errors_total\{source="cuda"\} (\d+)$', body, re.M)
            assert m and int(m.group(1)) == scrape, f"{how}: scrape {scrape}: errors {m and m.group(1)}"
            time.sleep(0.6)  # past the shared sample's age
    finally:
        server.stop()


def check_tls_and_auth(hwaccel: str, source: pathlib.Path, tmp: pathlib.Path) -> None:
    """HTTPS with a self-signed certificate and HTTP basic auth."""
    import base64
    import ssl
    import urllib.error
    import urllib.request

    cert, key, auth = tmp / "cert.pem", tmp / "key.pem", tmp / "auth"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    auth.write_text("prometheus:s3cret-pass\n")
    auth.chmod(0o644)
    refused = subprocess.run([hwaccel, "serve", "--listen", "127.0.0.1:0", "--basic-auth-file", str(auth)],
                             capture_output=True, text=True, timeout=30)
    assert refused.returncode == 2 and "readable by others" in refused.stderr, refused.stderr
    auth.chmod(0o600)
    server = Server(hwaccel, source / FIXTURE, tmp / "serve-tls.log", "--tls-cert", str(cert), "--tls-key", str(key),
                    "--basic-auth-file", str(auth))
    try:
        context = ssl.create_default_context(cafile=str(cert))
        url = f"https://127.0.0.1:{server.port}/metrics"

        def fetch(user_password):
            request = urllib.request.Request(url)
            if user_password:
                request.add_header("Authorization", "Basic " + base64.b64encode(user_password.encode()).decode())
            try:
                with urllib.request.urlopen(request, context=context, timeout=10) as r:
                    return r.status, r.read().decode()
            except urllib.error.HTTPError as e:
                return e.code, ""

        status, body = fetch("prometheus:s3cret-pass")
        assert status == 200 and "hwaccel_device_info" in body, status
        assert fetch(None)[0] == 401
        assert fetch("prometheus:wrong")[0] == 401
        assert fetch("prometheus:s3cret-pass-longer")[0] == 401
        plain = server.raw(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        assert not plain.startswith(b"HTTP/1.1 200"), "plain HTTP answered on the TLS port"
    finally:
        server.stop()


def main() -> int:
    hwaccel, source = sys.argv[1], pathlib.Path(sys.argv[2])
    with tempfile.TemporaryDirectory(prefix="hwaccel-http-") as tmp:
        tmp_path = pathlib.Path(tmp)
        server = Server(hwaccel, source / FIXTURE, tmp_path / "serve.log", "--request-timeout", "2",
                        "--max-connections", "64")
        try:
            check_malformed(server)
            check_slow_client(server)
            check_many_scrapes(server)
        finally:
            server.stop()
        for how in ("hang", "garbage", "flood"):
            check_broken_tool(hwaccel, source, tmp_path, how)
        check_tls_and_auth(hwaccel, source, tmp_path)
    print("hwaccel serve: malformed requests, a slow client, 1000 scrapes, broken tools, TLS and basic auth handled")
    return 0


if __name__ == "__main__":
    sys.exit(main())
