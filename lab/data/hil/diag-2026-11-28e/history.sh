# There: the three modes of history.mjs, each in its own process; bundle k191 (fc24601) and the seed-191 grid's 8k trace
# and Llama-3-8B profile carried into the tree at $TRACE_8K and $P. $OUT/history.txt.
OUT=${OUT:-/tmp/o}; W=/tmp/kvd-h; rm -rf $W; mkdir -p $W $OUT
xz -dc .device/node.xz > $W/node && chmod +x $W/node && tar -C $W -xJf .device/k191.tar.xz || exit 1
export KVTIER_HIL_ADDON=$W/k191/kvtier_hil.node
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  for m in fresh history ballast; do timeout 150 $W/node --max-old-space-size=8192 lab/data/hil/diag-2026-11-28e/history.mjs $W/k191/dist $TRACE_8K $P $m; done
  date -u
} > $OUT/history.txt 2>&1
cat $OUT/history.txt
