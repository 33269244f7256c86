#!/bin/bash
# On the GPU machine: the host's time issuing a step, as lowered and with the compute kernels taken out
# (perf/device/convert-pace.mjs), for the captured model's moving-nothing and moving cells and two
# host-bound Llama-3-8B cells of the seed-199 grid, each with the profile that grid calibrated.
# carry: .device/node.xz .device/v199.tar.xz
set -u
cd "$(dirname "$0")/../../../.." || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/kvd
xz -dc .device/node.xz > /tmp/kvd/node && chmod +x /tmp/kvd/node || exit 1
rm -rf /tmp/kvd/v199 && tar -C /tmp/kvd -xJf .device/v199.tar.xz || exit 1
B=/tmp/kvd/v199; N=/tmp/kvd/node; export KVTIER_HIL_ADDON=$B/kvtier_hil.node
D=lab/data/hil/diag-2026-11-28i
date -u | tee "$OUT/when.txt"
# the grid's traces: the captured one's first 16 steps, and the generated broad 8k trace of seed 199
$N --input-type=module -e "
const { writeTracePrefix } = await import('$B/dist/hil/validate/validate.js');
const { generateTrace } = await import('$B/dist/traces/generator.js');
writeTracePrefix('traces/captured/brown-long-8k.kvt', '/tmp/kvd/cap16.kvt', 16);
generateTrace('/tmp/kvd/broad8k.kvt', { preset: 'broad', model: 'llama-3-8b', layers: 32, prompt_tokens: 8192, steps: 16, seed: 199 }, { overwrite: true });
" || exit 1
run() { # POLICY BUDGET MODEL GROUP TRACE PROFILE
  POLICY=$1 MODEL=$3 GROUP=$4 ROUNDS=2 timeout 120 $N perf/device/convert-pace.mjs $B/dist "$5" "$6" "$2" "$OUT/spans-$1-${2%\%}.json" >> "$OUT/issue-pace.jsonl" 2>> "$OUT/err.txt"
  echo "$1 $2 rc $?"
}
CAP=traces/captured/kvtier-brown-gpt.model.json
run full 100% $CAP 64 /tmp/kvd/cap16.kvt $D/profile-kvtier-brown-gpt-s199.json
run h2o 20% $CAP 64 /tmp/kvd/cap16.kvt $D/profile-kvtier-brown-gpt-s199.json
run quest 20% $CAP 64 /tmp/kvd/cap16.kvt $D/profile-kvtier-brown-gpt-s199.json
run kivi 10% llama-3-8b 128 /tmp/kvd/broad8k.kvt $D/profile-llama-3-8b-s199.json
run smartkv 10% llama-3-8b 128 /tmp/kvd/broad8k.kvt $D/profile-llama-3-8b-s199.json
gzip -f "$OUT"/spans-*.json
tail -3 "$OUT/err.txt" 2>/dev/null
