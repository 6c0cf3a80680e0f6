#!/usr/bin/env python3
"""The static CLI's start-up layout holds: the functions listed in
tools/cli/startup-order.txt exist in the binary (the list is not stale) and
lie side by side at the start of its code, not spread over it.

usage: check_startup_layout.py ORDER_FILE CLI
"""
import subprocess
import sys

# Each 64 KB of code the start-up touches costs a page fault (the kernel maps
# a fault's neighbours up to 64 KB): the listed functions must fit in little
# more than their own size.
FAULT_AROUND = 64 * 1024


def main():
    order_file, cli = sys.argv[1], sys.argv[2]
    with open(order_file) as f:
        listed = [line.strip() for line in f if line.strip() and not line.startswith('#')]
    out = subprocess.run(['nm', '-S', '--defined-only', cli], check=True, capture_output=True, text=True).stdout
    sections = subprocess.run(['readelf', '-SW', cli], check=True, capture_output=True, text=True).stdout
    text_start = next(int(line.split('.text')[1].split()[1], 16) for line in sections.splitlines()
                      if line.split(']')[-1].split()[:1] == ['.text'])
    text_symbols, all_names = {}, set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) != 4:
            continue
        address, size, kind, name = int(parts[0], 16), int(parts[1], 16), parts[2], parts[3]
        all_names.add(name)
        if kind in 'tTW' and size > 0:
            text_symbols.setdefault(name, (address, size))
    found = [n for n in listed if n in all_names]
    failures = []
    if len(found) < len(listed) * 0.8:
        failures.append(f'only {len(found)} of the {len(listed)} symbols of {order_file} are in {cli}: '
                        'the list is stale; run tools/startup-order.py BUILD_DIR and rebuild')
    ordered = [text_symbols[n] for n in listed if n in text_symbols]
    if not ordered:
        failures.append('no listed function is in the binary')
    else:
        first = min(a for a, _ in ordered)
        last = max(a + s for a, s in ordered)
        total = sum(s for _, s in ordered)
        span = last - first
        print(f'{len(found)} of {len(listed)} listed symbols present; {len(ordered)} functions, '
              f'{total} bytes, lie in {span} bytes from {first - text_start} bytes into the code')
        # Alignment pads functions apart, and archive members built without a
        # section per function (glibc's, OpenSSL's) bring their neighbours:
        # allow 60 % more than their size, and one window. Unordered, they
        # spread over ten times their size.
        if span > total * 1.6 + FAULT_AROUND:
            failures.append(f'the listed functions are spread over {span} bytes for {total} bytes of code: '
                            'the linker did not apply the order')
        if first - text_start > FAULT_AROUND:
            failures.append(f'the listed functions start {first - text_start} bytes into the code, not at its start')
    for f in failures:
        print('FAIL:', f)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
