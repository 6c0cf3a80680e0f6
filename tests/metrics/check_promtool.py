#!/usr/bin/env python3
"""`promtool check metrics` (Prometheus' own linter) passes on `hwaccel metrics`
of every fixture machine; the OpenMetrics form of each ends with # EOF and
has the same samples.

    check_promtool.py HWACCEL PROMTOOL FIXTURES_DIR
"""

import pathlib
import subprocess
import sys


def main() -> int:
    hwaccel, promtool, fixtures = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
    machines = sorted(p for p in (fixtures / "machines").iterdir() if (p / "fixture.json").is_file())
    failures = []
    for machine in machines:
        text = subprocess.run([hwaccel, "metrics", "--fixture", str(machine)], capture_output=True, text=True,
                              timeout=60)
        if text.returncode != 0:
            failures.append(f"{machine.name}: hwaccel metrics exited {text.returncode}: {text.stderr[-500:]}")
            continue
        lint = subprocess.run([promtool, "check", "metrics"], input=text.stdout, capture_output=True, text=True,
                              timeout=60)
        if lint.returncode != 0 or lint.stdout.strip() or lint.stderr.strip():
            failures.append(f"{machine.name}: promtool: {lint.stdout}{lint.stderr}")
        om = subprocess.run([hwaccel, "metrics", "--openmetrics", "--fixture", str(machine)], capture_output=True,
                            text=True, timeout=60)
        samples = lambda t: sorted(l.split(" ")[0] for l in t.splitlines() if l and not l.startswith("#"))
        if not om.stdout.endswith("# EOF\n"):
            failures.append(f"{machine.name}: OpenMetrics output does not end with # EOF")
        elif samples(om.stdout) != samples(text.stdout):
            failures.append(f"{machine.name}: OpenMetrics and Prometheus text have different samples")
    for f in failures:
        print(f)
    print(f"{len(machines) - len(failures)} of {len(machines)} machines pass promtool check metrics")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
