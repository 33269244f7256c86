#!/bin/bash
# There (the GPU machine, through the device tool's `run`): the whole HIL confirmation in one call,
# results under $OUT: kernel checks on cuda and host with the default knobs and with
# KVTIER_HIL_ATTN_MMA=0, the benchmarks (copies, attention, overlap, gemv, file, quality), then
# `hil calibrate` and the six-policy `hil compare` on a generated Llama-3-8B 8k trace (64 steps).
#   bash perf/device/run.sh NAME [checks|compare|all]   (default all; bundle made by perf/device/bundle.sh NAME)
cd "$(dirname "$0")/../.." || exit 1
NAME=${1:?usage: bash perf/device/run.sh NAME [checks|compare|all]}
WHAT=${2:-all}
OUT=${OUT:-/tmp/kvtier-device-out}
mkdir -p "$OUT" /tmp/kvd
T0=$(date +%s)
xz -dc .device/node.xz > /tmp/kvd/node && chmod +x /tmp/kvd/node
tar -C /tmp/kvd -xJf ".device/$NAME.tar.xz" || exit 1
N=/tmp/kvd/node
B=/tmp/kvd/$NAME
export KVTIER_HIL_ADDON=$B/kvtier_hil.node
date -u | tee "$OUT/when.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/when.txt"
rc=0
if [ "$WHAT" != compare ]; then
  $N perf/hil-device-check.mjs --dist "$B/dist" --out /tmp/kvd/bench > "$OUT/checks-default.txt" 2>&1 || rc=1
  grep -E "checks passed|^FAIL" "$OUT/checks-default.txt"
  grep -E "^attention L=" "$OUT/checks-default.txt" | sed -E 's/steps\/s.*//' | head -40
  KVTIER_HIL_ATTN_MMA=0 $N perf/hil-device-check.mjs --dist "$B/dist" --out /tmp/kvd/bench-mma0 --only attention > "$OUT/checks-mma0.txt" 2>&1 || rc=1
  grep -E "checks passed|^FAIL" "$OUT/checks-mma0.txt"
  cp /tmp/kvd/bench/*.json "$OUT/" 2>/dev/null
  echo "checks + benchmarks: $(( $(date +%s) - T0 )) s"
fi
if [ "$WHAT" != checks ]; then
  $N perf/device/compare.mjs "$B/dist" /tmp/kvd/cmp > "$OUT/compare-log.txt" 2>&1 || rc=1
  tail -30 "$OUT/compare-log.txt"
  cp /tmp/kvd/cmp/profile.json "$OUT/profile.json" 2>/dev/null
  cp /tmp/kvd/cmp/profile.fit.json "$OUT/profile.fit.json" 2>/dev/null
  cp /tmp/kvd/cmp/compare/compare.json "$OUT/compare.json" 2>/dev/null
fi
echo "total $(( $(date +%s) - T0 )) s, rc $rc"
exit $rc
