#!/bin/bash
# On the GPU machine: perf/nvme-bench.c's timeline mode (O_DIRECT pread on 32 threads, no GPU work) over
# the read batches of two stored cells as the HIL lowered them (export-file-reads.mjs) and two synthetic
# sets like the calibration's sized batches (synth-reads.py), on the file tier's disk (/tmp).
#   there: bash lab/data/hil/diag-2026-11-28g/disk-replay.sh      ($OUT gets disk-replay.jsonl)
set -uo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/kvtier-device-out}
mkdir -p "$OUT"
gcc -O2 -pthread ../../../../perf/nvme-bench.c -o /tmp/nb -lm || exit 1
python3 synth-reads.py compact /tmp/compact.txt && python3 synth-reads.py spread /tmp/spread.txt
for f in reads-synapsevm-10pct reads-synapsevm-20pct reads-lru-offload-nvme-10pct; do gzip -dc "$f.txt.gz" > "/tmp/$f.txt"; done
{ date -u; df -h /tmp | tail -1; lsblk -o NAME,ROTA,SIZE,MODEL 2>/dev/null | head -5; } > "$OUT/when.txt"
run() { # NAME FILE_MB REPLAY
  FILE_MB=$2 T=32 CHUNK=67108864 ROUNDS=3 /tmp/nb /tmp timeline "$3" | sed "s/^{/{\"set\":\"$1\",\"file_MB\":$2,/" | tee -a "$OUT/disk-replay.jsonl"
}
for round in 1 2; do
  run compact 128 /tmp/compact.txt
  run spread 1100 /tmp/spread.txt
  run synapsevm-10pct 1100 /tmp/reads-synapsevm-10pct.txt
  run synapsevm-20pct 1100 /tmp/reads-synapsevm-20pct.txt
  run compact-in-1100 1100 /tmp/compact.txt
done
run lru-offload-nvme-10pct 1100 /tmp/reads-lru-offload-nvme-10pct.txt
