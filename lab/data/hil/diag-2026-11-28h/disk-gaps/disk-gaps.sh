#!/bin/bash
# On the GPU machine: SynapseVM's 10% read batches (seed 193, as the HIL lowered them) replayed by
# perf/nvme-bench.c's timeline mode (O_DIRECT pread, 32 threads, no GPU work) with 0, 0.3, 1 and 3 ms of
# idle before each batch, in turn, twice over; each batch's time kept (BATCHES=1).
#   there: bash lab/data/hil/diag-2026-11-28h/disk-gaps/disk-gaps.sh      ($OUT gets disk-gaps.jsonl)
set -uo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/kvtier-device-out}
mkdir -p "$OUT"
gcc -O2 -pthread ../../../../../perf/nvme-bench.c -o /tmp/nb -lm || exit 1
gzip -dc ../../diag-2026-11-28g/reads-synapsevm-10pct.txt.gz > /tmp/reads.txt
date -u > "$OUT/when.txt"
for pass in 1 2; do
  for gap in 0 300 1000 3000; do
    FILE_MB=1100 T=32 CHUNK=67108864 ROUNDS=1 BATCHES=1 GAP_US=$gap /tmp/nb /tmp timeline /tmp/reads.txt |
      sed "s/^{/{\"gap_us\":$gap,\"pass\":$pass,/" >> "$OUT/disk-gaps.jsonl"
  done
done
echo done
