#!/bin/bash
# On the GPU machine: three cells of the seed-223 grid whose steps the host does not set and whose simulated mean is off
# the hardware's by 3-8% on most held-out grids (Oracle 20%, FlexGen static 40%, SynapseVM 40%, broad 8k), each plan run
# by the executor as lowered and without compute (perf/device/convert-pace.mjs), with the profile the grid calibrated;
# the stream spans of every step of the runs as lowered kept. carry: .device/node.xz .device/v223.tar.xz
set -u
cd "$(dirname "$0")/../../../../.." || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/kvd
[ -x /tmp/kvd/node ] || { xz -dc .device/node.xz > /tmp/kvd/node && chmod +x /tmp/kvd/node; } || exit 1
[ -d /tmp/kvd/v223 ] || tar -C /tmp/kvd -xJf .device/v223.tar.xz || exit 1
B=/tmp/kvd/v223; N=/tmp/kvd/node; export KVTIER_HIL_ADDON=$B/kvtier_hil.node
R=lab/data/hil/diag-2026-11-28j/rebucket
date -u | tee "$OUT/when.txt"
run() { # POLICY BUDGET
  POLICY=$1 MODEL=llama-3-8b GROUP=128 ROUNDS=2 timeout 150 $N perf/device/convert-pace.mjs $B/dist $R/broad-every-policy-llama-3-8b-8k-s223.kvt $R/profile-llama-3-8b-s223.json "$2" "$OUT/spans-$1-${2%\%}.json" >> "$OUT/gpu-set.jsonl" 2>> "$OUT/err.txt"
  echo "$1 $2 rc $?"
}
run oracle 20%
run flexgen-static 40%
run synapsevm 40%
gzip -f "$OUT"/spans-*.json
tail -3 "$OUT/err.txt"
