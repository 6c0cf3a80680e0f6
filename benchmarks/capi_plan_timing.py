#!/usr/bin/python3
"""The native library's plan through the same C API call the WebAssembly
module exports, timed in-process: the like-for-like partner of the npm
package's warm plan() (benchmarks/wasm_benchmark.mjs runs it).

usage: capi_plan_timing.py LIBHWACCEL_SO CASES_JSON RUNS
Prints one median in milliseconds per case, one per line. Each call builds
the request (hwaccel_request_set per option), plans without a registry (the
published specs), parses the JSON and frees everything, as plan() does.
"""
import ctypes
import json
import statistics
import sys
import time


def main():
    lib = ctypes.CDLL(sys.argv[1])
    cases = json.loads(sys.argv[2])
    runs = int(sys.argv[3])
    lib.hwaccel_request_new.restype = ctypes.c_void_p
    lib.hwaccel_request_free.argtypes = [ctypes.c_void_p]
    lib.hwaccel_request_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p]
    lib.hwaccel_plan_json.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32,
                                      ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t), ctypes.c_void_p]
    lib.hwaccel_string_free.argtypes = [ctypes.c_void_p]

    def plan(options):
        request = lib.hwaccel_request_new()
        try:
            for key, value in options.items():
                if lib.hwaccel_request_set(request, key.encode(), str(value).encode(), None) != 0:
                    sys.exit(f'hwaccel_request_set {key}={value} failed')
            out, length = ctypes.c_void_p(), ctypes.c_size_t()
            if lib.hwaccel_plan_json(None, request, 0, ctypes.byref(out), ctypes.byref(length), None) != 0:
                sys.exit(f'hwaccel_plan_json {options} failed')
            try:
                return json.loads(ctypes.string_at(out, length.value))
            finally:
                lib.hwaccel_string_free(out)
        finally:
            lib.hwaccel_request_free(request)

    for options in cases:
        for _ in range(200):  # the catalogue's first read and warm caches, as the package's warm-up
            plan(options)
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            plan(options)
            times.append((time.perf_counter() - start) * 1000)
        print(f'{statistics.median(times):.3f}')


if __name__ == '__main__':
    main()
