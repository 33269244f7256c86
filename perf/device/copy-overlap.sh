#!/bin/bash
# There (the GPU machine): one calibration, then per-op timelines of the policies whose copies run beside
# the layers' kernels (Quest, Oracle: single-block moves) and of the copy-bound ones (LRU offload, ARC,
# flexgen-static, uniform-int8), and a per-op fit of each run's copy batches against the kernels they ran
# beside (lab/experiments/copy-overlap-fit.mjs), to see which copies pay the under-compute price:
#   here:  bash perf/device/bundle.sh NAME
#   there: bash perf/device/copy-overlap.sh NAME   (carry: .device/node.xz .device/NAME.tar.xz)
# QUICK=1 for a quick calibration (default full); CELLS as perf/device/diag-compare.mjs takes them.
# $OUT gets copy-overlap.txt (the calibration's fits, the compares, the per-op fits) and timelines.tgz
# (profile, every run's trace.json and hil-steps.csv).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
NAME=${1:?usage: bash perf/device/copy-overlap.sh NAME}
OUT=${OUT:-/tmp/kvtier-device-out}
W=/tmp/kvd-ov
rm -rf "$W" && mkdir -p "$W" "$OUT"
xz -dc .device/node.xz > "$W/node" && chmod +x "$W/node" || exit 1
tar -C "$W" -xJf ".device/$NAME.tar.xz" || exit 1
export KVTIER_HIL_ADDON=$W/$NAME/kvtier_hil.node
export CELLS=${CELLS:-"8192:broad:1:20%:quest+oracle+lru-offload+arc;8192:broad:1:10%:lru-offload+flexgen-static+uniform-int8"}
export REPEAT=1 STEPS=16 QUICK=${QUICK:-0}
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; echo "CELLS=$CELLS QUICK=$QUICK"; } > "$OUT/copy-overlap.txt"
"$W/node" perf/device/diag-compare.mjs "$W/$NAME/dist" "$W/out" >> "$OUT/copy-overlap.txt" 2>&1
for h in "$W"/out/c-*/hil-*/trace.json; do
  s=${h/\/hil-/\/sim-}
  [ -f "$s" ] && "$W/node" lab/experiments/copy-overlap-fit.mjs "$h" "$s" >> "$OUT/copy-overlap.txt" 2>&1
done
tar -C "$W/out" -czf "$OUT/timelines.tgz" --exclude='*.kvt' --exclude='steps.arrow' .
tail -n 40 "$OUT/copy-overlap.txt"
