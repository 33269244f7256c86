# There: SmartKV 20% six times in one process with node's default young generation, then six times with a 64 MiB
# semi-space (fewer scavenges in the host's issue loop); as history.sh. $OUT/semispace.txt.
OUT=${OUT:-/tmp/o}; W=/tmp/kvd-h; rm -rf $W; mkdir -p $W $OUT
xz -dc .device/node.xz > $W/node && chmod +x $W/node && tar -C $W -xJf .device/k191.tar.xz || exit 1
export KVTIER_HIL_ADDON=$W/k191/kvtier_hil.node
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 100 $W/node lab/data/hil/diag-2026-11-28e/history.mjs $W/k191/dist $TRACE_8K $P many
  echo "--min-semi-space-size=64 --max-semi-space-size=64:"
  timeout 100 $W/node --min-semi-space-size=64 --max-semi-space-size=64 lab/data/hil/diag-2026-11-28e/history.mjs $W/k191/dist $TRACE_8K $P many
  date -u
} > $OUT/semispace.txt 2>&1
cat $OUT/semispace.txt
