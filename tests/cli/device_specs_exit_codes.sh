#!/bin/sh
# A user device-spec file (--device-specs, $HWACCEL_DEVICE_SPECS) for
# `hwaccel specs`, plan, train and recommend: listed, named by --devices and
# by a user catalogue; a bad file is exit status 1 naming the entry and field.
hwaccel="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/expect.sh"

cat >"$tmp/devices.json" <<'JSON'
{"devices": [
 {"id": "my-gpu-48gb", "name": "MyGPU-48GB", "product": "Example MyGPU 48GB", "vendor": "Example",
  "backend": "cuda", "architecture": "Ada Lovelace", "compute_capability": "8.9", "memory_gib": 48,
  "memory_bandwidth_gbps": 960, "bf16_tflops": 180, "fp16_tflops": 180, "fp8_tflops": 360, "match": "mygpu",
  "source": "test"}]}
JSON
cat >"$tmp/bad.json" <<'JSON'
{"devices": [{"id": "x-gpu", "name": "X-GPU", "vendor": "X", "backend": "cuda", "architecture": "Hopper",
  "memory_gib": 80, "memory_bandwidth_gbps": -1}]}
JSON
cat >"$tmp/catalogue.json" <<'JSON'
{"format": "hwaccel-instance-catalogue", "version": 1, "prices": "test", "instances": [
 {"provider": "gcp", "name": "mine-2xmygpu", "region": "us-central1", "accelerator": "my-gpu-48gb", "count": 2,
  "memory_per_device_gib": 48, "interconnect": "pcie", "vcpus": 32, "host_memory_gib": 256,
  "price_usd_per_hour": 2, "price_date": "2025-03-01", "price_source": "test"}]}
JSON

expect 0 specs --device-specs "$tmp/devices.json"
expect 0 specs --json --device-specs "$tmp/devices.json"
expect 1 specs --device-specs "$tmp/bad.json"
expect 1 specs --device-specs /nonexistent/devices.json
expect 0 plan --model llama-3.1-8b --quant bf16 --devices 2xMyGPU-48GB --device-specs "$tmp/devices.json" --json
expect 2 plan --model llama-3.1-8b --quant bf16 --devices 2xMyGPU-48GB
expect 1 plan --model llama-3.1-8b --quant bf16 --devices 2xMyGPU-48GB --device-specs "$tmp/bad.json"
expect 0 train --model llama-3.2-1b --method lora --devices 1xMyGPU-48GB --device-specs "$tmp/devices.json" --json
expect 0 recommend --model llama-3.1-8b --quant bf16 --catalogue "$tmp/catalogue.json" --device-specs "$tmp/devices.json"
expect 1 recommend --model llama-3.1-8b --quant bf16 --catalogue "$tmp/catalogue.json"

out=$("$hwaccel" specs --device-specs "$tmp/devices.json")
case "$out" in
  *"H100-SXM-80GB"*"MyGPU-48GB "*"[file]"*) ;;
  *) echo "FAIL: specs does not list the file's entry after the table: $out"; failures=$((failures + 1)) ;;
esac
out=$("$hwaccel" specs --json --device-specs "$tmp/devices.json")
case "$out" in
  *'"id":"my-gpu-48gb"'*'"user_file":"'"$tmp"'/devices.json"'*) ;;
  *) echo "FAIL: specs --json does not mark the file's entry"; failures=$((failures + 1)) ;;
esac
# The environment variable names the file; --device-specs wins over it.
out=$(HWACCEL_DEVICE_SPECS="$tmp/devices.json" "$hwaccel" plan --model llama-3.1-8b --quant bf16 --devices 1xMyGPU-48GB --json)
case "$out" in
  *'"spec_id":"my-gpu-48gb"'*) ;;
  *) echo "FAIL: HWACCEL_DEVICE_SPECS not used: $out"; failures=$((failures + 1)) ;;
esac
HWACCEL_DEVICE_SPECS="$tmp/bad.json" "$hwaccel" specs --device-specs "$tmp/devices.json" >/dev/null 2>&1 ||
  { echo "FAIL: --device-specs did not win"; failures=$((failures + 1)); }
err=$("$hwaccel" specs --device-specs "$tmp/bad.json" 2>&1 >/dev/null)
case "$err" in
  *'hwaccel specs: device-specs: '*'devices[0] "x-gpu": "memory_bandwidth_gbps" must be a positive number'*) ;;
  *) echo "FAIL: bad file message: $err"; failures=$((failures + 1)) ;;
esac

[ "$failures" -eq 0 ] || exit 1
echo "all device-spec exit codes as expected"
