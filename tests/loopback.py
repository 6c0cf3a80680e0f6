"""What the tests that run real daemons on loopback share: free ports on
127.0.0.0/8 addresses, `hwaccel serve` started and waited for, and every
process stopped at the end, pass or fail."""

import pathlib
import re
import socket
import subprocess
import time


def free_port_on(addresses=("127.0.0.1",)) -> int:
    """A TCP port free on every one of `addresses` (loopback ones)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind((addresses[0], 0))
            port = s.getsockname()[1]
        try:
            for a in addresses[1:]:
                with socket.socket() as s:
                    s.bind((a, port))
            return port
        except OSError:
            continue
    raise RuntimeError(f"no port free on every one of {addresses}")


def start_serve(hwaccel: str, args, log: pathlib.Path, seconds: float = 30):
    """`hwaccel serve ARGS` with its output in `log`; (process, port) once it says where it listens."""
    out = open(log, "w")
    proc = subprocess.Popen([hwaccel, "serve", *args], stdout=out, stderr=out)
    deadline = time.time() + seconds
    while time.time() < deadline:
        m = re.search(r"listening on https?://[^ ]*:(\d+)/metrics", log.read_text())
        if m:
            return proc, int(m.group(1))
        if proc.poll() is not None:
            raise RuntimeError(f"hwaccel serve exited: {log.read_text()}")
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"hwaccel serve did not say where it listens: {log.read_text()}")


def stop_all(procs) -> None:
    """Terminates the processes, last started first, and kills what does not end within 10 s."""
    for p in reversed(procs):
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
