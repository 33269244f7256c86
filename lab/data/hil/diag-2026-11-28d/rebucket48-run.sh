# There (the GPU machine), bundle k181 (f86b03a): hil compare of SmartKV 20% on a 49-step broad 8k trace of seed 181 (its
# re-bucketing steps 15, 31 and 47), two HIL runs, the seed-181 grid's Llama-3-8B profile. TRACE_8K48: made here by
#   kvtier trace gen --out t8k48.kvt --preset broad --prompt-tokens 8192 --steps 49 --seed 181
# and carried into the tree. Ran 2026-11-28 13:02 UTC, H200.
set -uo pipefail
OUT=${OUT:-/tmp/o}; W=/tmp/kvd-rb; rm -rf $W; mkdir -p $W $OUT
xz -dc .device/node.xz > $W/node && chmod +x $W/node && tar -C $W -xJf .device/k181.tar.xz || exit 1
export KVTIER_HIL_ADDON=$W/k181/kvtier_hil.node
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $OUT/rb48.txt
P=lab/validate/run-f86b03a-h200-seed181-2026-11-28/profiles/llama-3-8b.json
PROFILE=$P STEPS=49 REPEAT=2 CELLS="file:$TRACE_8K48:20%:smartkv" timeout 150 $W/node perf/device/diag-compare.mjs $W/k181/dist $W/out >> $OUT/rb48.txt 2>&1
echo "rc $?" >> $OUT/rb48.txt
tar -C $W/out -czf $OUT/rb48.tgz --exclude='*.kvt' --exclude='steps.arrow' .
tail -8 $OUT/rb48.txt
