#!/bin/bash
# On the GPU machine: SynapseVM's and LRU offload's read batches (seed 193, 8k, as the HIL lowered them:
# ../diag-2026-11-28g/reads-*.txt.gz) replayed by perf/nvme-bench.c's timeline mode (O_DIRECT pread, 32
# threads, no GPU work) on the file tier's disk under three conditions:
#   synced    the file's fill ends with fdatasync (as before)
#   unsynced  no fdatasync after the fill: the HIL's initial placement writes the file without one
#   gap       synced, 3 ms idle before each batch (the HIL's steps leave the disk idle between batches)
# Each batch's requests and time are kept (BATCHES=1).
#   there: bash lab/data/hil/diag-2026-11-28h/disk-conditions.sh      ($OUT gets disk-conditions.jsonl)
set -uo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/kvtier-device-out}
mkdir -p "$OUT"
gcc -O2 -pthread ../../../../perf/nvme-bench.c -o /tmp/nb -lm || exit 1
G=../diag-2026-11-28g
for f in reads-synapsevm-10pct reads-lru-offload-nvme-10pct; do gzip -dc "$G/$f.txt.gz" > "/tmp/$f.txt"; done
{ date -u; df -h /tmp | tail -1; lsblk -o NAME,ROTA,SIZE,MODEL 2>/dev/null | head -5; } > "$OUT/when.txt"
run() { # CONDITION SET FILL_SYNC GAP_US ROUNDS
  FILE_MB=1100 T=32 CHUNK=67108864 ROUNDS=$5 BATCHES=1 FILL_SYNC=$3 GAP_US=$4 /tmp/nb /tmp timeline "/tmp/reads-$2.txt" |
    sed "s/^{/{\"condition\":\"$1\",\"set\":\"$2\",/" >> "$OUT/disk-conditions.jsonl"
}
for pass in 1 2 3; do
  run unsynced synapsevm-10pct 0 0 1
  run synced synapsevm-10pct 1 0 1
  run gap synapsevm-10pct 1 3000 1
done
for pass in 1 2; do
  run unsynced lru-offload-nvme-10pct 0 0 1
  run synced lru-offload-nvme-10pct 1 0 1
done
echo done
