#!/bin/bash
# On the GPU machine: SmartKV's re-bucketing step (step 15) on the seed-223 grid's needle and broad 8k traces, with
# the profile that grid calibrated, run by the executor as lowered and without compute (perf/device/convert-pace.mjs),
# the steps' stream spans of the runs as lowered kept. carry: .device/node.xz .device/v223.tar.xz
set -u
cd "$(dirname "$0")/../../../../.." || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/kvd
[ -x /tmp/kvd/node ] || { xz -dc .device/node.xz > /tmp/kvd/node && chmod +x /tmp/kvd/node; } || exit 1
[ -d /tmp/kvd/v223 ] || tar -C /tmp/kvd -xJf .device/v223.tar.xz || exit 1
B=/tmp/kvd/v223; N=/tmp/kvd/node; export KVTIER_HIL_ADDON=$B/kvtier_hil.node
D=lab/data/hil/diag-2026-11-28j/rebucket
date -u | tee "$OUT/when.txt"
run() { # TRACE BUDGET NAME
  POLICY=smartkv MODEL=llama-3-8b GROUP=128 ROUNDS=2 timeout 150 $N perf/device/convert-pace.mjs $B/dist "$1" $D/profile-llama-3-8b-s223.json "$2" "$OUT/spans-$3.json" >> "$OUT/rebucket.jsonl" 2>> "$OUT/err.txt"
  echo "$3 rc $?"
}
run $D/needle-llama-3-8b-8k-s223.kvt 20% needle-20
run $D/broad-every-policy-llama-3-8b-8k-s223.kvt 20% broad-20
run $D/needle-llama-3-8b-8k-s223.kvt 40% needle-40
gzip -f "$OUT"/spans-*.json
tail -3 "$OUT/err.txt"
