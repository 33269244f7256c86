#!/bin/bash
# There (the GPU machine, one call of about 8 minutes on one H100): 32k-token captured traces.
# Trains the reference model (traces/capture/model.py, the shape of traces/captured/kvtier-brown-gpt.model.json)
# with its length curriculum extended to 32768 tokens (train.py --max-seq 32768: 16k from 75% of
# the time budget, 32k from 88%), then captures from it:
#   brown-long-32k.kvt        held-out Brown text, 32768-token prompt, 128 sampled steps (T 0.8)
#   brown-needle-32k-d50.kvt  passkey at half depth of a held-out haystack, 64 greedy steps
# Needs the corpus made here by traces/capture/prepare_corpus.py (traces/capture/README.md), carried:
#   carry: [".device/capture/data"]     command: OUT=$OUT bash perf/device/capture-32k.sh
# $OUT gets log.txt (training curve, passkey evaluation at 1k/8k/32k, capture summaries), the two
# .kvt files and ckpt.tar (checkpoint shards, kvtier-model.json, vocab.json, recipe.json).
# TRAIN_SECONDS (default 330) is the training budget.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
OUT=${OUT:?set OUT}
DATA=${DATA:-.device/capture/data}
CK=/tmp/kvtier-brown-gpt-32k
mkdir -p "$OUT"
[ -f "$DATA/brown.jsonl" ] || { echo "capture-32k.sh: no $DATA/brown.jsonl (run traces/capture/prepare_corpus.py and carry .device/capture/data)" >&2; exit 2; }
log() { tee -a "$OUT/log.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 | log
python3 -c 'import torch, numpy; print("torch", torch.__version__, "numpy", numpy.__version__)' 2>&1 | log
rm -rf "$CK"
python3 traces/capture/train.py --data "$DATA" --out "$CK" --max-seq 32768 --eval-lengths 1024,8192,32768 \
  --max-seconds "${TRAIN_SECONDS:-330}" 2>&1 | log
[ -f "$CK/kvtier-model.json" ] || { echo "capture-32k.sh: training wrote no checkpoint" | log; exit 1; }
tar cf "$OUT/ckpt.tar" -C "$CK" .
NOTE="32k reference capture, perf/device/capture-32k.sh (train.py --max-seq 32768)"
common=(--model "$CK" --corpus "$DATA/brown.jsonl" --name kvtier-brown-gpt-32k --prompt-tokens 32768 --topk 64 --force --note "$NOTE")
python3 traces/capture/capture.py "${common[@]}" --scenario long --steps 128 --out "$OUT/brown-long-32k.kvt" 2>&1 | log
python3 traces/capture/capture.py "${common[@]}" --scenario needle --depth 0.5 --seed 102 --steps 64 \
  --out "$OUT/brown-needle-32k-d50.kvt" 2>&1 | log
ls -la "$OUT" | log
