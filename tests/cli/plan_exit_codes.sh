#!/bin/sh
# Exit codes and output formats of `hwaccel plan`: 0 planned, 1 the model or
# fixture could not be read, 2 bad usage; JSON when stdout is not a terminal.
hwaccel="$1"
fixtures="$2"

. "$(dirname "$0")/expect.sh"

expect 0 plan --model llama-3.1-70b --devices 8xH100-SXM-80GB
expect 0 plan --params 7e9 --devices 1xRTX-4090 --human
expect 0 plan --params 70B --fixture "$fixtures/machines/dual-xeon-8480-no-accel" --json --pretty
expect 0 plan --model mixtral-8x7b --quant q4_k_m --kv-dtype q8_0 --devices "2xRTX-4090+1xRTX-3090"
expect 0 plan --model llama-3.1-405b --devices 4xL4-24GB   # does not fit: still a plan, "fits": false
expect 0 specs
expect 0 specs --json
expect 0 models
expect 0 models --json
expect 2 plan
expect 2 plan --params 7e9 --model llama-2-7b
expect 2 plan --params 0 --devices 1xL4-24GB
expect 2 plan --params seven --devices 1xL4-24GB
expect 2 plan --params 7e9 --quant q9_k --devices 1xL4-24GB
expect 2 plan --params 7e9 --kv-dtype q4_k_m --devices 1xL4-24GB
expect 2 plan --params 7e9 --devices 8xNOPE
expect 2 plan --params 7e9 --devices 0xL4-24GB
expect 2 plan --params 7e9 --reserve 2 --devices 1xL4-24GB
expect 2 plan --model llama-2-7b --context 8192 --devices 1xL4-24GB
expect 2 plan --params 7e9 --fixture "$fixtures/machines/dual-xeon-8480-no-accel" --devices 1xL4-24GB
expect 1 plan --model /nonexistent/model.gguf
expect 1 plan --model no-such-model
expect 1 plan --params 7e9 --quant q4_k_m --devices 4xTPU-v5e

# Not a terminal: JSON; --human forces text.
out=$("$hwaccel" plan --params 7e9 --devices 1xRTX-4090)
case "$out" in
  "{"*'"fits":true'*) ;;
  *) echo "FAIL: piped output is not JSON: $out"; failures=$((failures + 1)) ;;
esac
out=$("$hwaccel" plan --params 7e9 --devices 1xRTX-4090 --human)
case "$out" in
  Model*Strategy*Assumptions*) ;;
  *) echo "FAIL: --human output: $out"; failures=$((failures + 1)) ;;
esac

[ "$failures" -eq 0 ] || exit 1
echo "all plan exit codes as expected"
