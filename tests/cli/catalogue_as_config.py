#!/usr/bin/env python3
"""Every catalogue model plans as its own config.json does.

    catalogue_as_config.py HWACCEL DATA/models.json

The catalogue's entries are config.json objects (data/models.json), read by
the reader of a user's config.json. For each entry this writes its "config" to
a file, as a user holding that model's config.json would have it, and checks
that `hwaccel plan --model FILE` and `hwaccel plan --model ID` give the same
plan: the parameter counts, memory, KV cache, layout, speed and whether it
fits (the name, the source and the launch commands differ by design).
"""
import json
import os
import subprocess
import sys
import tempfile

DEVICE_SETS = ['8xH100-SXM-80GB', '1xRTX-4090']
COMPARED = ['quantization', 'kv_cache', 'context', 'batch', 'memory', 'strategy', 'shards', 'throughput', 'fits']
MODEL_FIELDS = ['params', 'active_params', 'layers', 'architecture_assumed']


def plan(hwaccel, model, devices):
    # 2048 tokens: within every catalogue model's context (Falcon's is 2048).
    run = subprocess.run([hwaccel, 'plan', '--model', model, '--devices', devices, '--context', '2048', '--json'],
                         capture_output=True, text=True, timeout=60)
    if run.returncode not in (0, 1):  # 1: does not fit, still a plan
        sys.exit(f'hwaccel plan --model {model} --devices {devices} exited {run.returncode}: {run.stderr.strip()}')
    return json.loads(run.stdout)


def main():
    hwaccel, catalogue = sys.argv[1], sys.argv[2]
    with open(catalogue, encoding='utf-8') as f:
        models = json.load(f)['models']
    if len(models) < 60:
        sys.exit(f'{catalogue}: only {len(models)} models')
    failures = []
    with tempfile.TemporaryDirectory() as work:
        for entry in models:
            path = os.path.join(work, entry['id'], 'config.json')
            os.makedirs(os.path.dirname(path))
            with open(path, 'w', encoding='utf-8') as f:
                json.dump(entry['config'], f)
            for devices in DEVICE_SETS:
                by_id, by_file = plan(hwaccel, entry['id'], devices), plan(hwaccel, path, devices)
                if by_id['model']['source'] != 'catalogue':
                    failures.append(f"{entry['id']}: --model {entry['id']} is not the catalogue's")
                for key in MODEL_FIELDS:
                    if by_id['model'].get(key) != by_file['model'].get(key):
                        failures.append(f"{entry['id']} on {devices}: model.{key} {by_id['model'].get(key)} "
                                        f"from the catalogue, {by_file['model'].get(key)} from its config.json")
                for key in COMPARED:
                    if by_id.get(key) != by_file.get(key):
                        failures.append(f"{entry['id']} on {devices}: \"{key}\" differs:\n  catalogue: "
                                        f"{json.dumps(by_id.get(key))[:400]}\n  config.json: {json.dumps(by_file.get(key))[:400]}")
    if failures:
        print('\n'.join(failures))
        sys.exit(f'{len(failures)} differences between catalogue ids and their config.json')
    print(f'{len(models)} catalogue models plan as their config.json does, on {", ".join(DEVICE_SETS)}')


if __name__ == '__main__':
    main()
