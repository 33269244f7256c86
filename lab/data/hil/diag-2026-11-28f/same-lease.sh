# There (the GPU machine, one call): a Llama-3-8B calibration as the standing grid takes it (quick, the
# grid's held-out points; perf/device/calibrate-repeat.mjs), then the seed-191 copy lists replayed on the
# device alone (copy-replay.py --idle-only), on the same lease, so that the lists can be priced with a
# profile of that lease (here: price-lists.py). Bundle NAME carried with .device/node.xz.
#   bash lab/data/hil/diag-2026-11-28f/same-lease.sh NAME
NAME=${1:?usage: same-lease.sh NAME}
OUT=${OUT:-/tmp/o}; W=/tmp/kvd-s; rm -rf $W; mkdir -p $W $OUT
xz -dc .device/node.xz > $W/node && chmod +x $W/node && tar -C $W -xJf .device/$NAME.tar.xz || exit 1
export KVTIER_HIL_ADDON=$W/$NAME/kvtier_hil.node
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $OUT/when.txt
timeout 330 $W/node perf/device/calibrate-repeat.mjs $W/$NAME/dist $OUT 1 llama-3-8b > $OUT/calibrate-log.txt 2>&1
echo "calibrate rc $?" >> $OUT/calibrate-log.txt
cd lab/data/hil/diag-2026-11-28f && python3 copy-replay.py copies-seed191.json.gz --idle-only > $OUT/copy-replay-idle-same-lease.txt 2>&1
date -u >> $OUT/when.txt
cat $OUT/when.txt $OUT/calibrate-log.txt; tail -2 $OUT/copy-replay-idle-same-lease.txt
