#!/bin/sh
# Exit codes and output of `hwaccel recommend`: 0 an instance fits, 1 none
# fits or the model or catalogue could not be read, 2 bad usage; a user
# catalogue (--catalogue or $HWACCEL_INSTANCE_CATALOGUE) replaces the built-in one.
hwaccel="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/expect.sh"

cat >"$tmp/one.json" <<'JSON'
{"format": "hwaccel-instance-catalogue", "version": 1, "prices": "test", "instances": [
 {"provider": "gcp", "name": "mine-8xh100", "region": "us-central1", "accelerator": "h100-sxm5-80gb", "count": 8,
  "memory_per_device_gib": 80, "interconnect": "nvswitch", "vcpus": 208, "host_memory_gib": 1872,
  "price_usd_per_hour": 1.5, "price_date": "2025-03-01", "price_source": "test"}]}
JSON
cat >"$tmp/bad.json" <<'JSON'
{"format": "hwaccel-instance-catalogue", "version": 1, "instances": [
 {"provider": "aws", "name": "mislabelled", "region": "us-east-1", "accelerator": "mi300x-192gb", "count": 8,
  "memory_per_device_gib": 80, "interconnect": "xgmi", "vcpus": 96, "host_memory_gib": 900,
  "price_usd_per_hour": 35, "price_date": "2025-03", "price_source": "test"}]}
JSON
printf '{"format": ' >"$tmp/truncated.json"

expect 0 recommend --model llama-3.1-8b --quant bf16
expect 0 recommend --model llama-3.1-70b --quant fp8 --provider aws,azure --human --all-rejected
expect 0 recommend --model mixtral-8x7b --quant int4 --context 32768 --batch 4 --json --pretty
expect 0 recommend --model llama-3.1-70b --quant bf16 --catalogue "$tmp/one.json"
expect 1 recommend --model llama-3.1-405b --quant fp32 --provider gcp
expect 1 recommend --model llama-3.1-8b --quant bf16 --catalogue /nonexistent/instances.json
expect 1 recommend --model llama-3.1-8b --quant bf16 --catalogue "$tmp/bad.json"
expect 1 recommend --model llama-3.1-8b --quant bf16 --catalogue "$tmp/truncated.json"
expect 1 recommend --model no-such-model --quant bf16
expect 2 recommend --model llama-3.1-8b
expect 2 recommend --quant bf16
expect 2 recommend --model llama-3.1-8b --quant q9_k
expect 2 recommend --model llama-3.1-8b --quant bf16 --provider oracle
expect 2 recommend --model llama-3.1-8b --quant bf16 --top 0
expect 2 recommend --model llama-2-7b --quant bf16 --context 8192
expect 0 recommend --model llama-3.1-8b --quant bf16 --kv-dtype fp8_e4m3
expect 2 recommend --model llama-3.1-8b --quant bf16 --kv-dtype q4_k_m

# Not a terminal: JSON, cheapest first, rejections with reasons.
out=$("$hwaccel" recommend --model llama-3.1-8b --quant bf16)
case "$out" in
  "{"*'"recommended":[{'*'"rejected":[{'*'"rejection":"dtype","reason":"BF16 is unsupported on the NVIDIA T4'*) ;;
  *) echo "FAIL: piped output: $out"; failures=$((failures + 1)) ;;
esac
# The environment variable names a catalogue; --catalogue wins over it.
out=$(HWACCEL_INSTANCE_CATALOGUE="$tmp/one.json" "$hwaccel" recommend --model llama-3.1-8b --quant bf16 --human)
case "$out" in
  *mine-8xh100*) ;;
  *) echo "FAIL: HWACCEL_INSTANCE_CATALOGUE not used: $out"; failures=$((failures + 1)) ;;
esac
case "$out" in
  *p5.48xlarge*) echo "FAIL: the built-in catalogue was not replaced"; failures=$((failures + 1)) ;;
esac
HWACCEL_INSTANCE_CATALOGUE="$tmp/bad.json" "$hwaccel" recommend --model llama-3.1-8b --quant bf16 \
  --catalogue "$tmp/one.json" >/dev/null 2>&1 || { echo "FAIL: --catalogue did not win"; failures=$((failures + 1)); }
err=$("$hwaccel" recommend --model llama-3.1-8b --quant bf16 --catalogue "$tmp/bad.json" 2>&1 >/dev/null)
case "$err" in
  *'instances[0] "mislabelled"'*'does not match AMD Instinct MI300X'*) ;;
  *) echo "FAIL: bad catalogue message: $err"; failures=$((failures + 1)) ;;
esac

[ "$failures" -eq 0 ] || exit 1
echo "all recommend exit codes as expected"
