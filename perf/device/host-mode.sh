#!/bin/bash
# There (the GPU machine, through the device tool's `run`): does the host's pace at issuing a host-bound
# plan follow the CPU its thread runs on? perf/device/host-mode.mjs unbound (ROUNDS runs in one process,
# twice), then in one process bound to each CPU in turn (taskset -c, 2 runs each). $OUT gets the machine's
# CPU facts and every run's JSON line. GPU_CLOCKS=1: each run's line also has the GPU's clocks before and after it.
#   bash perf/device/host-mode.sh NAME      (bundle made by perf/device/bundle.sh NAME)
cd "$(dirname "$0")/../.." || exit 1
NAME=${1:?usage: bash perf/device/host-mode.sh NAME}
OUT=${OUT:-/tmp/kvtier-device-out}
mkdir -p "$OUT" /tmp/kvd
[ -x /tmp/kvd/node ] || { xz -dc .device/node.xz > /tmp/kvd/node && chmod +x /tmp/kvd/node; }
[ -d "/tmp/kvd/$NAME" ] || tar -C /tmp/kvd -xJf ".device/$NAME.tar.xz" || exit 1
N=/tmp/kvd/node
B=/tmp/kvd/$NAME
export KVTIER_HIL_ADDON=$B/kvtier_hil.node
T=traces/captured/brown-long-8k.kvt
M=traces/captured/kvtier-brown-gpt.model.json
{
  date -u; nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader
  lscpu; lscpu -e; grep -E "^(processor|cpu MHz|core id|physical id)" /proc/cpuinfo | paste - - - -
} > "$OUT/host-mode-machine.txt" 2>&1
# (GPU_CLOCKS=1: the GPU's clocks sampled every 50 ms throughout, with their times, beside the runs' start and end)
[ "${GPU_CLOCKS:-0}" = 1 ] && { nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,pstate,power.draw --format=csv,noheader -lms 50 > "$OUT/gpu-clocks.csv" 2>&1 & SMI=$!; }
for rep in 1 2; do TAG=unbound ROUNDS=${ROUNDS:-4} $N perf/device/host-mode.mjs "$B/dist" $T $M >> "$OUT/host-mode.jsonl" 2>> "$OUT/host-mode-err.txt"; done
for c in $(seq 0 $(( $(nproc) - 1 ))); do TAG=cpu$c ROUNDS=2 taskset -c "$c" $N perf/device/host-mode.mjs "$B/dist" $T $M >> "$OUT/host-mode.jsonl" 2>> "$OUT/host-mode-err.txt"; done
for rep in 3 4; do TAG=unbound ROUNDS=${ROUNDS:-4} $N perf/device/host-mode.mjs "$B/dist" $T $M >> "$OUT/host-mode.jsonl" 2>> "$OUT/host-mode-err.txt"; done
[ -n "${SMI:-}" ] && kill "$SMI"
python3 - "$OUT/host-mode.jsonl" <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l); print(d['tag'], d['round'], d['cpu_before'], d['cpu_after'], d['mhz_before'], d['probe_us'] and round(d['probe_us'],2), d['issue_us'], d['latency_us'])
PY
tail -5 "$OUT/host-mode-err.txt"
