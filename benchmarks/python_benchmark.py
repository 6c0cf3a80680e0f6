#!/usr/bin/env python3
"""Python package benchmarks (docs/benchmarks.md, "Python package").

    python_benchmark.py --python VENV/bin/python --detect-bench build/benchmarks/detect-bench

- `import hwaccel`: the package's cumulative import time from
  `python -X importtime`, median of 20 fresh interpreters (target <= 30 ms);
- `hwaccel.detect(fixture=<8-GPU node>)` against the same detection in C++
  (detect-bench's replay_from_disk, which also opens the fixture), run
  alternately in one session (target: Python <= 1.2 x C++ + 20 us).

The interpreter must be able to import the installed package.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys

SOURCE = pathlib.Path(__file__).resolve().parents[1]
MACHINE = SOURCE / "fixtures" / "machines" / "dgx-h100-8x-nvswitch"

PY_DETECT = r"""
import sys, time, hwaccel
machine = sys.argv[1]
for _ in range(200):
    hwaccel.detect(fixture=machine)
samples = []
for _ in range(15):
    n = 300
    start = time.perf_counter()
    for _ in range(n):
        hwaccel.detect(fixture=machine)
    samples.append((time.perf_counter() - start) / n * 1e6)
samples.sort()
print(samples[len(samples) // 2])
"""


def import_time_us(python: str) -> float:
    samples = []
    for _ in range(20):
        done = subprocess.run([python, "-X", "importtime", "-c", "import hwaccel"], capture_output=True, text=True,
                              check=True, cwd="/")
        for line in done.stderr.splitlines():
            parts = [p.strip() for p in line.split("|")]
            if len(parts) == 3 and parts[2] == "hwaccel":
                samples.append(float(parts[1]))
    return statistics.median(samples)


def cpp_detect_us(bench: str) -> float:
    done = subprocess.run([bench, "--benchmark_filter=^replay_from_disk/dgx-h100-8x-nvswitch$",
                           "--benchmark_repetitions=15", "--benchmark_format=json", "--benchmark_min_time=0.2"],
                          capture_output=True, text=True, check=True,
                          env={**os.environ, "HWACCEL_FIXTURES": str(SOURCE / "fixtures")})
    runs = json.loads(done.stdout)["benchmarks"]
    return next(b["real_time"] for b in runs if b.get("aggregate_name") == "median")


def python_detect_us(python: str) -> float:
    done = subprocess.run([python, "-c", PY_DETECT, str(MACHINE)], capture_output=True, text=True, check=True, cwd="/")
    return float(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--detect-bench", required=True)
    args = parser.parse_args()

    imports = import_time_us(args.python)
    cpp, py = [], []
    for _ in range(3):  # alternately, so that both see the same machine
        cpp.append(cpp_detect_us(args.detect_bench))
        py.append(python_detect_us(args.python))
    cpp_us, py_us = statistics.median(cpp), statistics.median(py)
    limit = 1.2 * cpp_us + 20
    print(f"import hwaccel (median of 20 interpreters): {imports / 1000:.1f} ms "
          f"(target <= 30 ms: {'met' if imports <= 30_000 else 'missed'})")
    print(f"detect 8-GPU fixture: C++ {cpp_us:.0f} us, Python {py_us:.0f} us "
          f"(ratio {py_us / cpp_us:.2f}; target <= 1.2 x C++ + 20 us = {limit:.0f} us: "
          f"{'met' if py_us <= limit else 'missed'})")
    print(f"  runs: C++ {', '.join(f'{v:.0f}' for v in cpp)}; Python {', '.join(f'{v:.0f}' for v in py)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
