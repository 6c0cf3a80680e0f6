#!/usr/bin/env python3
"""hwaccel top --hosts against real `hwaccel serve --fixture` processes on
loopback (127.0.0.2, .3, .4, each on a free port), one node that accepts
connections and never answers (127.0.0.5), and one with basic auth.

usage: top_fleet.py HWACCEL FIXTURES_DIR

- GET /telemetry answers the sample with its processes;
- `top --once --hosts` shows a row per node and device, and a hung node as not
  answering within the timeout, without holding up the others;
- a node stopped between two runs, and one stopped while the screen runs
  (tmux, when installed), is shown as not answering while the others update;
- wrong credentials are named as such.
Every process started is stopped, pass or fail.
"""
import json
import os
import pathlib
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

hwaccel, fixtures = os.path.abspath(sys.argv[1]), pathlib.Path(sys.argv[2]).resolve()
machines = fixtures / "machines"
failures = []
servers = []
work = tempfile.mkdtemp(prefix="hwaccel-top-fleet-")


def serve(address, machine, *extra):
    p = subprocess.Popen([hwaccel, "serve", "--no-watch", "--listen", f"{address}:0", "--fixture", str(machines / machine), *extra],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    servers.append(p)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = p.stderr.readline()
        if "listening on http://" in line:
            url = line.split("listening on ")[1].split()[0]
            return url.rsplit("/metrics", 1)[0].removeprefix("http://")
        if not line and p.poll() is not None:
            break
    raise RuntimeError(f"hwaccel serve on {address} did not start")


def top(*args, timeout=60):
    start = time.monotonic()
    r = subprocess.run([hwaccel, "top", *args], capture_output=True, text=True, timeout=timeout)
    return r, time.monotonic() - start


hung = socket.socket()
held = []
try:
    a = serve("127.0.0.2", "dgx-h100-busy-containers")
    b = serve("127.0.0.3", "amd-2x-mi210-busy-fdinfo")
    c = serve("127.0.0.4", "a100-40gb-mig-processes")
    auth_file = pathlib.Path(work) / "auth"
    auth_file.write_text("viewer:s3cret\n")
    auth_file.chmod(0o600)
    d = serve("127.0.0.6", "tpu-v6e-4-vm-busy", "--basic-auth-file", str(auth_file))
    # A node that takes the connection and never answers.
    hung.bind(("127.0.0.5", 0))
    hung.listen(16)
    hung_node = f"127.0.0.5:{hung.getsockname()[1]}"
    threading.Thread(target=lambda: [held.append(hung.accept()) for _ in range(64)], daemon=True).start()

    doc = json.loads(urllib.request.urlopen(f"http://{a}/telemetry", timeout=10).read())
    if len(doc.get("devices", [])) != 8 or len(doc.get("processes", [])) != 9:
        failures.append(f"/telemetry of the busy DGX: {len(doc.get('devices', []))} devices, {len(doc.get('processes', []))} processes")

    hosts = ",".join([a, b, c, hung_node])
    r, took = top("--once", "--width", "160", "--hosts", hosts, "--timeout", "1")
    out = r.stdout
    if r.returncode != 0:
        failures.append(f"top --once --hosts: exit {r.returncode}: {r.stderr.strip()}")
    rows = [line for line in out.splitlines() if line.startswith(a)]
    if len(rows) != 8:
        failures.append(f"{a}: {len(rows)} device rows, expected 8:\n{out}")
    if not any(line.startswith(b) and "rocm:1" in line for line in out.splitlines()):
        failures.append(f"{b}: no rocm:1 row:\n{out}")
    mig = [line for line in out.splitlines() if line.startswith(c) and "cuda:0" in line]
    if not mig or not mig[0].rstrip().endswith("3"):
        failures.append(f"{c}: the MIG node's GPU does not count its 3 processes: {mig}")
    hung_rows = [line for line in out.splitlines() if line.startswith(hung_node)]
    if not hung_rows or "not answering" not in hung_rows[0] or "no answer within 1000 ms" not in hung_rows[0]:
        failures.append(f"the hung node is not shown as not answering: {hung_rows}")
    if took > 5:
        failures.append(f"top --once with a hung node took {took:.1f} s (timeout 1 s)")
    print(f"top --once over 4 nodes, one hung: {took:.2f} s")

    # Credentials: wrong, then right.
    bad = pathlib.Path(work) / "bad"
    bad.write_text("viewer:wrong\n")
    bad.chmod(0o600)
    r, _ = top("--once", "--hosts", d, "--basic-auth-file", str(bad))
    if "credentials refused" not in r.stdout:
        failures.append(f"wrong credentials: {r.stdout}")
    r, _ = top("--once", "--hosts", d, "--basic-auth-file", str(auth_file))
    if "tpu:3" not in r.stdout:
        failures.append(f"right credentials: no tpu:3 row: {r.stdout}")

    # A node stopped between two runs.
    servers[2].terminate()
    servers[2].wait(timeout=10)
    r, took = top("--once", "--width", "160", "--hosts", ",".join([a, c]), "--timeout", "1")
    gone = [line for line in r.stdout.splitlines() if line.startswith(c)]
    if not gone or "not answering" not in gone[0]:
        failures.append(f"a stopped node is not shown as not answering: {gone}")
    if len([line for line in r.stdout.splitlines() if line.startswith(a)]) != 8:
        failures.append("the live node's rows went missing beside a stopped one")

    # Bad input: a node that is no address, an empty hosts file.
    r, _ = top("--once", "--hosts", "not a host")
    if r.returncode != 2:
        failures.append(f"--hosts 'not a host': exit {r.returncode}")
    empty = pathlib.Path(work) / "hosts"
    empty.write_text("# nobody\n\n")
    r, _ = top("--once", "--hosts-file", str(empty))
    if r.returncode != 2 or "no node" not in r.stderr:
        failures.append(f"an empty hosts file: exit {r.returncode}: {r.stderr.strip()}")

    # The live view while a node stops (tmux, its own server socket).
    if shutil.which("tmux"):
        tmux = ["tmux", "-S", os.path.join(work, "socket"), "-f", "/dev/null"]
        command = f"exec env LC_ALL=C.UTF-8 TERM=screen {shlex.quote(hwaccel)} top --interval 0.5 --timeout 1 --hosts {a},{b}"
        subprocess.run([*tmux, "new-session", "-d", "-s", "fleet", "-x", "160", "-y", "40", command], check=True, timeout=20)
        try:
            def screen():
                return subprocess.run([*tmux, "capture-pane", "-p", "-t", "fleet"], capture_output=True, text=True, timeout=20).stdout

            def wait_for(needle, seconds=15):
                deadline = time.monotonic() + seconds
                while time.monotonic() < deadline:
                    text = screen()
                    if needle in text:
                        return text
                    time.sleep(0.1)
                failures.append(f"fleet view: {needle!r} did not appear:\n{screen()}")
                return screen()

            wait_for("2 nodes, 2 answering")
            servers[1].terminate()
            servers[1].wait(timeout=10)
            text = wait_for("2 nodes, 1 answering")
            if "last answer" not in text or len([line for line in text.splitlines() if line.startswith(a)]) != 8:
                failures.append(f"fleet view after a node stopped:\n{text}")
            subprocess.run([*tmux, "send-keys", "-t", "fleet", "q"], timeout=20)
        finally:
            subprocess.run([*tmux, "kill-server"], capture_output=True, timeout=20)
finally:
    for p in servers:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
    hung.close()
    for conn, _ in held:
        conn.close()
    shutil.rmtree(work, ignore_errors=True)

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
