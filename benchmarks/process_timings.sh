#!/usr/bin/env bash
# Whole-process timings of the hwaccel CLI with hyperfine, each against a C
# "hello world" built and timed in the same run (the floor of any process on
# this machine): `hwaccel --version` and `hwaccel detect` on this machine, with
# the targets of docs/benchmarks.md; a detection with fake
# nvidia-smi tools on PATH that answer as an 8xH100 node does (from the
# dgx-h100-8x-nvswitch fixture, after a delay); and a detection with a hung
# nvidia-smi under --timeout-ms. Prints each median and the ratios.
#
# usage: benchmarks/process_timings.sh [BUILD_DIR]   (default: build)
# environment: FAKE_DELAY_S     seconds each fake nvidia-smi waits (default 0.003;
#                               several values: "0.003 0.03")
#              DEADLINE_MS      --timeout-ms of the hung-tool run (default 200)
#              RUNS             hyperfine runs per command (default 200; 20 hung)
#              ROUNDS           rounds the start-up runs are split into (default 5)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
hwaccel=$(cd "$build" && pwd)/tools/hwaccel
fixture="$here/fixtures/machines/dgx-h100-8x-nvswitch"
delays=${FAKE_DELAY_S:-0.003}
deadline_ms=${DEADLINE_MS:-200}
runs=${RUNS:-200}

for tool in hyperfine jq; do
  command -v "$tool" >/dev/null || { echo "process_timings.sh: $tool is needed" >&2; exit 2; }
done
[[ -x $hwaccel ]] || { echo "process_timings.sh: no $hwaccel (build first)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# median_ms NAME COMMAND...: runs hyperfine and prints the median in ms.
median_ms() {
  local name=$1 n=$2
  shift 2
  hyperfine --style none --shell=none --warmup 5 --runs "$n" --export-json "$work/$name.json" "$@" >/dev/null 2>&1 ||
    hyperfine --style none --warmup 5 --runs "$n" --export-json "$work/$name.json" "$@" >/dev/null
  jq -r '.results[0].median * 1000' "$work/$name.json"
}

# A fake nvidia-smi: each command line captured in the fixture answers with
# its captured output after the delay; anything else fails as the real tool
# does for an unknown option.
write_fake_smi() {
  local dir=$1 delay=$2
  mkdir -p "$dir"
  {
    echo '#!/bin/sh'
    echo "sleep $delay"
    echo 'case "$*" in'
    jq -r --arg commands "$fixture/commands" \
      '.commands[] | select(.argv[0] == "nvidia-smi") |
       "  \"\(.argv[1:] | join(" "))\") exec cat \"\($commands)/\(.stdout)\" ;;"' "$fixture/fixture.json"
    echo '  *) echo "Invalid combination of input arguments. Please run '"'"'nvidia-smi -h'"'"' for help." >&2; exit 2 ;;'
    echo 'esac'
  } >"$dir/nvidia-smi"
  chmod +x "$dir/nvidia-smi"
}

# The floor: a C program that prints one line, built here with the system C compiler.
command -v cc >/dev/null || { echo "process_timings.sh: a C compiler (cc) is needed for the hello-world floor" >&2; exit 2; }
printf '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n' >"$work/hello.c"
cc -O2 -o "$work/hello" "$work/hello.c"

# verdict RATIO LIMIT: "met" or "missed".
verdict() { jq -rn --argjson r "$1" --argjson l "$2" 'if $r <= $l then "met" else "missed" end'; }

printf '%-52s %10s\n' "command" "median ms"
# The start-up ratios: hello, --version, detect and bare hwaccel alternate in
# $ROUNDS rounds, so that a drift of the machine's speed during the run (a
# virtual machine's neighbours) moves the floor with the commands. Each ratio
# is the median over rounds of the command's median / hello's median in the
# round; each time is the median of all its runs.
rounds=${ROUNDS:-5}
per_round=$(( (runs + rounds - 1) / rounds ))
for round in $(seq "$rounds"); do
  hyperfine --style none -N --warmup 5 --runs "$per_round" --export-json "$work/round-$round.json" \
    "$work/hello" "$hwaccel --version" "$hwaccel detect --no-timings" "$hwaccel" >/dev/null 2>&1 ||
    hyperfine --style none --warmup 5 --runs "$per_round" --export-json "$work/round-$round.json" \
      "$work/hello" "$hwaccel --version" "$hwaccel detect --no-timings" "$hwaccel" >/dev/null
done
# start_up INDEX: "median_ms ratio" of the command at INDEX (0 is hello).
start_up() {
  jq -rs --argjson i "$1" '
    def median: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
    ([.[].results[$i].times[]] | median * 1000) as $ms
    | ([.[] | .results[$i].median / .results[0].median] | median) as $ratio
    | "\($ms) \($ratio)"' "$work"/round-*.json
}
read -r hello _ < <(start_up 0)
printf '%-52s %10.3f\n' "C hello world (the floor)" "$hello"
read -r version ratio < <(start_up 1)
printf '%-52s %10.3f   (%.2fx hello; target <= 1.15x: %s)\n' "hwaccel --version" "$version" "$ratio" "$(verdict "$ratio" 1.15)"
read -r detect_ms ratio < <(start_up 2)
printf '%-52s %10.3f   (%.2fx hello; target <= 1.6x: %s)\n' "hwaccel detect (this machine)" "$detect_ms" "$ratio" "$(verdict "$ratio" 1.6)"
read -r local_ms ratio < <(start_up 3)
printf '%-52s %10.3f   (%.2fx hello)\n' "hwaccel (bare, this machine)" "$local_ms" "$ratio"
printf '%-52s %10s   (%d rounds of %d runs)\n' "" "" "$rounds" "$per_round"

for delay in $delays; do
  fake="$work/fake-$delay"
  write_fake_smi "$fake" "$delay"
  # --all-tools: this machine's kernel shows no NVIDIA device, so without it
  # the fakes would not be looked for (an 8xH100 node's kernel shows eight).
  gpus=$(PATH="$fake:$PATH" "$hwaccel" --all-tools | jq '[.devices[] | select(.backend == "cuda")] | length')
  ms=$(PATH="$fake:$PATH" median_ms "fake-$delay" "$runs" "$hwaccel --all-tools")
  printf '%-52s %10.2f   (%d GPUs; %.2fx of 39 ms)\n' "hwaccel, fake 8xH100 nvidia-smi (${delay}s each)" "$ms" \
    "$gpus" "$(jq -n "$ms / 39")"
  # The floor: the same captured command lines started at once by a shell,
  # without hwaccel. What hwaccel adds is the difference.
  {
    echo '#!/bin/sh'
    jq -r --arg fake "$fake" '.commands[] | select(.argv[0] == "nvidia-smi") |
      "\($fake)/nvidia-smi \(.argv[1:] | map(@sh) | join(" ")) >/dev/null &"' "$fixture/fixture.json"
    echo wait
  } >"$work/all-at-once-$delay.sh"
  chmod +x "$work/all-at-once-$delay.sh"
  floor=$(median_ms "floor-$delay" "$runs" "$work/all-at-once-$delay.sh")
  printf '%-52s %10.2f   (hwaccel adds %.2f ms)\n' "  the fakes alone, all at once from sh" "$floor" "$(jq -n "$ms - $floor")"
done

hung="$work/hung"
mkdir -p "$hung"
printf '#!/bin/sh\nexec sleep 1000\n' >"$hung/nvidia-smi"
chmod +x "$hung/nvidia-smi"
devices=$(PATH="$hung:$PATH" "$hwaccel" --all-tools --timeout-ms "$deadline_ms" | jq '.devices | length')
ms=$(PATH="$hung:$PATH" median_ms hung 20 "$hwaccel --all-tools --timeout-ms $deadline_ms")
printf '%-52s %10.2f   (deadline %d ms + %.2f ms; %d devices returned)\n' "hwaccel --all-tools, hung nvidia-smi, --timeout-ms $deadline_ms" \
  "$ms" "$deadline_ms" "$(jq -n "$ms - $deadline_ms")" "$devices"
