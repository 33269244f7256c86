# There (the GPU machine), bundle k181 (f86b03a): three HIL runs of SmartKV 8k 20% in one process, with CUDA's lazy module
# loading (the default) and with CUDA_MODULE_LOADING=EAGER, then three at 40% (lazy); TRACE_8K: the seed-181 grid's 8k trace
# (kvtier hil validate-resim writes it) carried into the tree. $OUT/warm.txt. Ran 2026-11-28 13:04 UTC, H200.
OUT=${OUT:-/tmp/o}; W=/tmp/kvd-rb; rm -rf $W; mkdir -p $W $OUT
xz -dc .device/node.xz > $W/node && chmod +x $W/node && tar -C $W -xJf .device/k181.tar.xz || exit 1
export KVTIER_HIL_ADDON=$W/k181/kvtier_hil.node
P=lab/validate/run-f86b03a-h200-seed181-2026-11-28/profiles/llama-3-8b.json
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 80 $W/node lab/data/hil/diag-2026-11-28d/rebucket-warm.mjs $W/k181/dist $TRACE_8K $P
  CUDA_MODULE_LOADING=EAGER timeout 80 $W/node lab/data/hil/diag-2026-11-28d/rebucket-warm.mjs $W/k181/dist $TRACE_8K $P
  timeout 60 $W/node lab/data/hil/diag-2026-11-28d/rebucket-warm.mjs $W/k181/dist $TRACE_8K $P 40%
} > $OUT/warm.txt 2>&1
cat $OUT/warm.txt
