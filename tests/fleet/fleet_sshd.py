#!/usr/bin/env python3
"""A fleet scan through a real OpenSSH server on loopback, with history in SQLite.

Starts `sshd` on 127.0.0.1 with a free port, a temporary host key and an
authorized client key; scans a host list with `ssh {host} hwaccel detect
--fixture ...` (each host name is a fixture machine, so every node answers
with a different registry); stores two scans in a database, diffs them and
checks the second against the first. sshd is stopped at the end, pass or fail.

    fleet_sshd.py HWACCEL FIXTURES_DIR
"""

import getpass
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=kw.pop("timeout", 120), **kw)


def main() -> int:
    hwaccel, fixtures = os.path.abspath(sys.argv[1]), pathlib.Path(sys.argv[2]).resolve()
    sshd = shutil.which("sshd") or "/usr/sbin/sshd"
    if not os.path.exists(sshd) or not shutil.which("ssh") or not shutil.which("ssh-keygen"):
        print("openssh-server and openssh-client are needed (apt install openssh-server)")
        return 1
    work = pathlib.Path(tempfile.mkdtemp(prefix="hwaccel-sshd-"))
    server = None
    failures = []
    try:
        for key in ("host_key", "client_key"):
            run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(work / key)], check=True)
        shutil.copy(work / "client_key.pub", work / "authorized_keys")
        port = free_port()
        (work / "sshd_config").write_text(
            f"Port {port}\nListenAddress 127.0.0.1\nHostKey {work / 'host_key'}\nPidFile {work / 'sshd.pid'}\n"
            f"AuthorizedKeysFile {work / 'authorized_keys'}\nStrictModes no\nUsePAM no\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
            "PermitRootLogin prohibit-password\nLogLevel ERROR\n")
        (work / "ssh_config").write_text(
            f"Host *\n  HostName 127.0.0.1\n  Port {port}\n  User {getpass.getuser()}\n"
            f"  IdentityFile {work / 'client_key'}\n  IdentitiesOnly yes\n  BatchMode yes\n"
            "  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n  ConnectTimeout 10\n")
        if os.geteuid() == 0:
            os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege separation folder
        server = subprocess.Popen([sshd, "-D", "-e", "-f", str(work / "sshd_config")], stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    print(f"sshd did not start: {server.stderr.read() if server.poll() is not None else 'no answer'}")
                    return 1
                time.sleep(0.1)

        hosts = ["dgx-h100-8x-nvswitch", "amd-8x-mi300x-xgmi", "hls2-8x-gaudi2-hl-smi", "no-such-machine"]
        (work / "hosts.txt").write_text("# loopback nodes, one fixture machine each\n" + "\n".join(hosts) + "\n")
        db = work / "fleet.sqlite"

        def scan(backends: str):
            template = (f"ssh -F {work / 'ssh_config'} {{host}} {hwaccel} detect --fixture {fixtures}/machines/{{host}} "
                        f"--host {{host}} --no-timings --backends {backends}")
            return run([hwaccel, "fleet", "scan", "--hosts", str(work / "hosts.txt"), "--exec", template,
                        "--deadline-ms", "60000", "--concurrency", "4", "--db", str(db)])

        first = scan("all")
        if first.returncode != 0:
            print(f"first scan exited {first.returncode}: {first.stderr}")
            return 1
        fleet = json.loads(first.stdout)
        nodes = {n["host"]: n for n in fleet["nodes"]}
        if sorted(nodes) != sorted(hosts):
            failures.append(f"nodes {sorted(nodes)} are not the host list")
        for host in hosts[:3]:
            node = nodes.get(host, {})
            if "registry" not in node:
                failures.append(f"{host}: no registry over ssh: {node.get('error')}")
            elif node["registry"]["system"].get("host") != host:
                failures.append(f"{host}: the registry names {node['registry']['system'].get('host')}")
        missing = nodes.get("no-such-machine", {}).get("error", {})
        if missing.get("kind") != "failed":
            failures.append(f"no-such-machine: expected a failed node, got {missing}")
        h100 = [c for c in fleet["totals"]["by_model"] if c["key"] == "NVIDIA H100 80GB HBM3"]
        if not h100 or h100[0]["devices"] != 8:
            failures.append(f"totals by model: {fleet['totals']['by_model']}")
        if "stored in" not in first.stderr:
            failures.append(f"no scan id reported: {first.stderr}")

        # The next night the H100 node's GPUs are gone (only the CPU answers there).
        second = scan("cpu,rocm,gaudi")
        if second.returncode != 0:
            failures.append(f"second scan exited {second.returncode}: {second.stderr}")
        history = run([hwaccel, "fleet", "history", "--db", str(db), "--json"])
        scans = json.loads(history.stdout) if history.returncode == 0 else []
        if len(scans) != 2:
            failures.append(f"history: {history.stdout}{history.stderr}")

        diff = run([hwaccel, "fleet", "diff", "--db", str(db), "--json"])
        if diff.returncode != 1:
            failures.append(f"fleet diff exited {diff.returncode} (1 means changes): {diff.stderr}")
        else:
            removed = [d for d in json.loads(diff.stdout)["devices"] if d["change"] == "removed"]
            if len(removed) != 8 or any(d["host"] != "dgx-h100-8x-nvswitch" for d in removed):
                failures.append(f"diff: expected 8 devices removed on the H100 node: {removed}")

        check = run([hwaccel, "fleet", "check", "--db", str(db), "--baseline", str(scans[0]["id"]) if scans else "1"])
        expected = "dgx-h100-8x-nvswitch: expected 8 NVIDIA H100 80GB HBM3, found 0; cuda:0 (0000:18:00.0) missing"
        if check.returncode != 1 or not check.stdout.startswith(expected):
            failures.append(f"fleet check exited {check.returncode}: {check.stdout}{check.stderr}")
        same = run([hwaccel, "fleet", "check", "--db", str(db), "--baseline", "latest"])
        if same.returncode != 0:
            failures.append(f"a scan checked against itself exited {same.returncode}: {same.stdout}")

        # The same scan as JSON lines on stdin (what `srun hwaccel detect` prints).
        lines = "".join(json.dumps(n["registry"]) + "\n" for n in fleet["nodes"] if "registry" in n)
        piped = run([hwaccel, "fleet", "scan", "--stdin"], input=lines)
        if piped.returncode != 0 or len(json.loads(piped.stdout)["nodes"]) != 3:
            failures.append(f"--stdin scan: {piped.returncode} {piped.stderr}")
    finally:
        if server is not None:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        shutil.rmtree(work, ignore_errors=True)

    for f in failures:
        print(f)
    print("fleet scan over sshd: " + ("FAILED" if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
