#!/usr/bin/env bash
# The GPU machine's part, in one call (about 8 minutes on one H100): train the reference model,
# save its checkpoint, capture the reference traces, and check the Hugging Face path on a tiny
# random Llama. Needs .device/capture/data (prepare_corpus.py) carried along; writes under $OUT:
#   log.txt, model-<i>.pt (checkpoint shards), meta.tar (kvtier-model.json, vocab.json,
#   recipe.json), traces.tar (the .kvt files).
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
OUT=${OUT:?set OUT}
DATA=${DATA:-.device/capture/data}
CK=/tmp/kvtier-brown-gpt
T=/tmp/kvtier-traces
mkdir -p "$T"
log() { tee -a "$OUT/log.txt"; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 | log
python3 -c 'import torch, numpy; print("torch", torch.__version__, "numpy", numpy.__version__)' 2>&1 | log
if [ -n "${CKPT_IN:-}" ]; then
  CK=$CKPT_IN
else
  python3 traces/capture/train.py --data "$DATA" --out "$CK" --max-seconds "${TRAIN_SECONDS:-360}" 2>&1 | log
  cp "$CK"/model-*.pt "$OUT"/ && tar cf "$OUT/meta.tar" -C "$CK" kvtier-model.json vocab.json recipe.json
fi
python3 traces/capture/selftest.py --model "$CK" 2>&1 | log
python3 traces/capture/reference.py --model "$CK" --corpus "$DATA/brown.jsonl" --out "$T" --train-haystack \
  --note "${NOTE:-reference capture, traces/capture/device-run.sh}" 2>&1 | log
python3 traces/capture/selftest.py --hf-tiny /tmp/hf-tiny-llama 2>&1 | log
python3 traces/capture/capture.py --model /tmp/hf-tiny-llama --scenario random --prompt-tokens 300 --steps 16 \
  --topk 8 --force --name hf-tiny-llama-random --out "$T/hf-tiny-llama-random.kvt" 2>&1 | log
tar cf "$OUT/traces.tar" -C "$T" .
ls -la "$OUT" "$T" | log
