#!/bin/bash
# There (the GPU machine): the attention benchmark of two or more bundles (perf/device/bundle.sh NAME,
# e.g. one built from an older commit) alternated on the same card, ROUNDS rounds (default 2), so a
# kernel change is timed against its baseline on one machine. Prints one line per bundle, round and
# attention row; JSON results under $OUT/ab-NAME-rROUND.json.
#   bash perf/device/bundle-ab.sh NAME1 NAME2 ...   (carry: .device/node.xz and each .device/NAME.tar.xz)
cd "$(dirname "$0")/../.." || exit 1
[ $# -ge 2 ] || { echo "usage: bash perf/device/bundle-ab.sh NAME1 NAME2 ..." >&2; exit 2; }
OUT=${OUT:-/tmp/kvtier-device-out}
mkdir -p "$OUT" /tmp/kvd
xz -dc .device/node.xz > /tmp/kvd/node && chmod +x /tmp/kvd/node || exit 1
for n in "$@"; do tar -C /tmp/kvd -xJf ".device/$n.tar.xz" || exit 1; done
# a bundle packed without node_modules (to fit the transfer) uses the first bundle's packages
for n in "$@"; do [ -d "/tmp/kvd/$n/node_modules" ] || ln -s "/tmp/kvd/$1/node_modules" "/tmp/kvd/$n/node_modules"; done
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/when.txt"
rc=0
for round in $(seq 1 "${ROUNDS:-2}"); do
  for n in "$@"; do
    B=/tmp/kvd/$n
    KVTIER_HIL_ADDON=$B/kvtier_hil.node /tmp/kvd/node "$B/dist/perf/hil-bench.js" --backend cuda --only attention \
      --out "/tmp/kvd/ab-$n-r$round" > "/tmp/kvd/ab-$n-r$round.log" 2>&1 || { echo "$n round $round failed"; rc=1; }
    cp "/tmp/kvd/ab-$n-r$round/hil-results.json" "$OUT/ab-$n-r$round.json" 2>/dev/null
    grep -E "^attention L=" "/tmp/kvd/ab-$n-r$round.log" | sed -E "s/^/$n r$round /; s/steps\/s.*//"
  done
done
exit $rc
