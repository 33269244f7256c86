# There (the GPU machine), bundle k181 (perf/device/bundle.sh at f86b03a): hil compare of SmartKV (and KIVI) on the
# seed-181 grid's own traces with that grid's Llama-3-8B profile (no calibration), 16 steps, one HIL run each; $OUT gets
# rb.txt and rb.tgz (every run's trace.json and hil-steps.csv). TRACE_8K / TRACE_32K: the grid's 8k and 32k traces as
# `kvtier hil validate-resim` writes them (broad-every-policy-llama-3-8b-8k-s181.kvt, broad-llama-3-8b-32k-s181.kvt),
# carried into the tree. Ran 2026-11-28 12:56 UTC on an H200 (driver 580.159.04).
set -uo pipefail
OUT=${OUT:-/tmp/o}; W=/tmp/kvd-rb; rm -rf $W; mkdir -p $W $OUT
xz -dc .device/node.xz > $W/node && chmod +x $W/node && tar -C $W -xJf .device/k181.tar.xz || exit 1
export KVTIER_HIL_ADDON=$W/k181/kvtier_hil.node
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $OUT/rb.txt
P=lab/validate/run-f86b03a-h200-seed181-2026-11-28/profiles/llama-3-8b.json
PROFILE=$P STEPS=16 REPEAT=1 CELLS="file:$TRACE_8K:20%:smartkv+kivi;file:$TRACE_32K:40%:smartkv" timeout 200 $W/node perf/device/diag-compare.mjs $W/k181/dist $W/out >> $OUT/rb.txt 2>&1
echo "rc $?" >> $OUT/rb.txt
tar -C $W/out -czf $OUT/rb.tgz --exclude='*.kvt' --exclude='steps.arrow' .
tail -40 $OUT/rb.txt
