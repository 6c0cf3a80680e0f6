#!/usr/bin/env python3
"""DNS-SD end to end: `hwaccel serve --advertise` and `hwaccel fleet scan --mdns`
through a real Avahi daemon.

The test re-runs itself inside new network, mount and PID namespaces
(`unshare`): the namespace's only interface is its own loopback, with
multicast turned on, so no packet leaves it; a tmpfs over /run keeps the
daemons' pid files and sockets there; and when the test ends, pass or fail,
the PID namespace ends and every process in it (dbus-daemon, avahi-daemon,
the exporters, the helpers) with it.

Inside: a private D-Bus system bus and avahi-daemon (loopback only, IPv4);
a browse before the daemon runs fails with the daemon named; two exporters
(`serve --fixture ... --advertise`, the same default name, so Avahi renames
the second) are found by `fleet scan --mdns` with their registries, and
their _prometheus-http._tcp twins carry path=/metrics; a service whose TXT
path is not /registry is left out and one whose port has no exporter is a
node error; an exporter stopped with SIGTERM, and one killed with SIGKILL,
are withdrawn from the network.

    fleet_mdns.py HWACCEL HWACCEL_MDNS FIXTURES_DIR
"""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from loopback import start_serve, stop_all  # noqa: E402

INSIDE = "HWACCEL_MDNS_TEST_NAMESPACE"

BUS_CONF = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
"""

AVAHI_CONF = """[server]
host-name=hwaccel-mdns-test
use-ipv4=yes
use-ipv6=no
allow-interfaces=lo
enable-dbus=yes
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
[reflector]
[rlimits]
"""


def enter_namespaces() -> int:
    """Runs this script again in its own network, mount and PID namespaces."""
    unshare = shutil.which("unshare")
    if not unshare:
        print("unshare (util-linux) is needed", file=sys.stderr)
        return 1
    spaces = ["--net", "--mount", "--pid", "--fork", "--kill-child"]
    if os.geteuid() != 0:
        spaces = ["--user", "--map-root-user"] + spaces
    env = dict(os.environ, **{INSIDE: "1"})
    r = subprocess.run([unshare, *spaces, sys.executable, __file__, *sys.argv[1:]], env=env, timeout=280)
    if r.returncode != 0 and os.geteuid() != 0:
        print("namespaces could not be made without root (unprivileged user namespaces may be off)", file=sys.stderr)
    return r.returncode


def wait_for(what, check, seconds=20.0):
    deadline = time.time() + seconds
    while time.time() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def browse(helper, service_type, wait_ms=3000):
    r = subprocess.run([helper, "browse", service_type, "--timeout-ms", str(wait_ms)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines() if line.strip()]


def scan(hwaccel, *args):
    r = subprocess.run([hwaccel, "fleet", "scan", "--mdns", "--mdns-wait-ms", "4000", "--deadline-ms", "5000", *args],
                       capture_output=True, text=True, timeout=120)
    return r


def published_name(log: pathlib.Path):
    m = re.search(r'mDNS: \{"published":"([^"]*)","port":(\d+)', log.read_text())
    return m and (m.group(1), int(m.group(2)))


def inside(hwaccel, helper, fixtures: pathlib.Path) -> int:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    subprocess.run(["ip", "link", "set", "lo", "multicast", "on"], check=True)
    # The daemons' pid files and sockets stay in this mount namespace.
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/run"], check=True)
    os.makedirs("/run/avahi-daemon")
    procs = []
    with tempfile.TemporaryDirectory(prefix="hwaccel-mdns-") as tmp:
        tmp_path = pathlib.Path(tmp)
        try:
            bus = tmp_path / "system_bus_socket"
            (tmp_path / "bus.conf").write_text(BUS_CONF.format(socket=bus))
            bus_log = open(tmp_path / "dbus.log", "w")  # it says it cannot raise its fd limit: harmless here
            procs.append(subprocess.Popen(["dbus-daemon", "--nofork", "--config-file", str(tmp_path / "bus.conf")],
                                          stdout=bus_log, stderr=bus_log))
            wait_for("the D-Bus socket", bus.exists)
            os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = f"unix:path={bus}"

            r = scan(hwaccel)
            assert r.returncode == 1 and "cannot reach the Avahi daemon" in r.stderr, (r.returncode, r.stderr)

            (tmp_path / "avahi.conf").write_text(AVAHI_CONF)
            avahi_log = open(tmp_path / "avahi.log", "w")
            procs.append(subprocess.Popen(["avahi-daemon", "--no-drop-root", "--no-chroot", "--no-rlimits", "-f",
                                           str(tmp_path / "avahi.conf")], stdout=avahi_log, stderr=avahi_log))
            try:
                wait_for("avahi-daemon", lambda: subprocess.run([helper, "browse", "_hwaccel-probe._tcp", "--timeout-ms", "100"],
                                                                capture_output=True).returncode == 0)
            except AssertionError:
                avahi_log.close()
                r = subprocess.run([helper, "browse", "_hwaccel-probe._tcp", "--timeout-ms", "100"], capture_output=True, text=True)
                raise AssertionError(f"avahi-daemon did not start ({r.returncode}: {r.stderr}): "
                                     f"{(tmp_path / 'avahi.log').read_text()}")

            exporters = {}
            for fixture in ("dgx-h100-8x-nvswitch", "amd-2x-mi210-pcie"):
                log = tmp_path / f"serve-{fixture}.log"
                proc, port = start_serve(hwaccel, ["--listen", "127.0.0.1:0", "--fixture",
                                                   str(fixtures / "machines" / fixture), "--no-watch", "--advertise"], log)
                procs.append(proc)
                name, published_port = wait_for(f"{fixture}'s services", lambda: published_name(log))
                assert published_port == port, (published_port, port)
                exporters[port] = (fixture, name, proc)
            names = sorted(name for _, name, _ in exporters.values())
            assert len(set(names)) == 2 and names[1] == names[0] + " #2", names  # Avahi's rename of the second

            r = scan(hwaccel)
            assert r.returncode == 0, r.stderr
            fleet = json.loads(r.stdout)
            gpus = {n["host"]: sum(1 for d in n["registry"]["devices"] if d["backend"] != "cpu")
                    for n in fleet["nodes"] if n.get("registry")}
            want = {f"hwaccel-mdns-test:{p}": (8 if f.startswith("dgx") else 2) for p, (f, _, _) in exporters.items()}
            assert gpus == want, (gpus, want, fleet)
            assert all(n["source"].startswith("http:127.0.0.1:") for n in fleet["nodes"]), fleet["nodes"]

            metrics = browse(helper, "_prometheus-http._tcp")
            assert sorted(s["port"] for s in metrics) == sorted(exporters), metrics
            assert all(s["txt"] == {"path": "/metrics"} for s in metrics), metrics
            port = metrics[0]["port"]
            with urllib.request.urlopen(f"http://{metrics[0]['address']}:{port}/metrics", timeout=10) as reply:
                assert b"hwaccel_" in reply.read()

            # A service that is not a registry, and one where nothing listens.
            rogue = subprocess.Popen([helper, "publish", "--name", "not an exporter", "--port", "9", "_hwaccel._tcp",
                                      "path=/metrics"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            silent = subprocess.Popen([helper, "publish", "--name", "nothing here", "--port", "1", "_hwaccel._tcp",
                                       "path=/registry"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            procs += [rogue, silent]
            for p in (rogue, silent):
                assert b'"published"' in p.stdout.readline()
            fleet = json.loads(scan(hwaccel).stdout)
            hosts = sorted(n["host"] for n in fleet["nodes"])
            assert hosts == sorted(["hwaccel-mdns-test:1", *want]), hosts  # the path=/metrics one is left out
            errors = [n["host"] for n in fleet["nodes"] if n.get("error")]
            assert errors == ["hwaccel-mdns-test:1"], fleet["nodes"]
            for p in (rogue, silent):
                p.stdin.close()
                p.wait(timeout=10)

            # Withdrawn when the exporter stops (SIGTERM) and when it is killed.
            ports = sorted(exporters)
            exporters[ports[0]][2].terminate()
            exporters[ports[0]][2].wait(timeout=10)
            wait_for("the stopped exporter's withdrawal",
                     lambda: sorted(s["port"] for s in browse(helper, "_hwaccel._tcp", 1500)) == ports[1:])
            exporters[ports[1]][2].kill()
            exporters[ports[1]][2].wait(timeout=10)
            wait_for("the killed exporter's withdrawal", lambda: browse(helper, "_hwaccel._tcp", 1500) == [])
            r = scan(hwaccel)
            assert r.returncode == 0 and json.loads(r.stdout)["nodes"] == [], r.stdout
            assert "no _hwaccel._tcp service answered" in r.stdout, r.stdout

            print(f"found {len(want)} exporters by mDNS ({gpus}); renamed {names[1]!r}; metrics twins, a rogue and a "
                  "silent service, and withdrawal on SIGTERM and SIGKILL behave")
            return 0
        finally:
            stop_all(procs)


def main() -> int:
    hwaccel, helper, fixtures = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
    if os.environ.get(INSIDE) != "1":
        return enter_namespaces()
    os.environ["HWACCEL_MDNS_HELPER"] = helper
    return inside(hwaccel, helper, fixtures)


if __name__ == "__main__":
    sys.exit(main())
