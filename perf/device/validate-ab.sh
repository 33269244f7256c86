#!/bin/bash
# Two bundles on one validation grid, on the same GPU machine and with the same calibration: the first
# bundle calibrates (held-out points, as kvtier hil validate does), the second reuses its profile, then
# the first runs again, so a change in the simulator or the plans is compared on the same hardware.
#   here:  bash perf/device/bundle.sh A; bash perf/device/bundle.sh B; bash perf/device/validate.sh pack A
#   there: bash perf/device/validate-ab.sh A B GRID   (carry: .device/node.xz .device/A.tar.xz
#          .device/B.tar.xz .device/validate-mods.tar.xz); B may hold dist alone (B/dist), A's packages serve it
# $OUT gets ab-A-1.txt, ab-B.txt, ab-A-2.txt (each run's log and summary) and ab.tgz (the three outdirs).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
A=${1:?usage: bash perf/device/validate-ab.sh A B GRID}
B=${2:?usage: bash perf/device/validate-ab.sh A B GRID}
GRID=${3:?usage: bash perf/device/validate-ab.sh A B GRID}
OUT=${OUT:-/tmp/kvtier-device-out}
W=/tmp/kvd-ab
mkdir -p "$OUT" "$W"
xz -dc .device/node.xz > "$W/node" && chmod +x "$W/node" || exit 1
for n in "$A" "$B"; do
  rm -rf "${W:?}/$n" && tar -C "$W" -xJf ".device/$n.tar.xz" || exit 1
  # a bundle of dist alone (to fit the carry limit) takes the first bundle's packages and addon
  if [ ! -d "$W/$n/node_modules" ]; then ln -s "$W/$A/node_modules" "$W/$n/node_modules"; ln -s "$W/$A/kvtier_hil.node" "$W/$n/kvtier_hil.node"; cp "$W/$A/package.json" "$W/$n/"; continue; fi
  tar -C "$W/$n" -xJf .device/validate-mods.tar.xz || exit 1
done
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; } | tee "$OUT/ab-when.txt"
one() { # bundle, outdir, log
  rm -rf "$2" && mkdir -p "$2/profiles"
  [ -d "$W/profiles" ] && cp "$W"/profiles/* "$2/profiles/"
  KVTIER_HIL_ADDON="$W/$1/kvtier_hil.node" "$W/node" perf/device/validate.mjs "$W/$1/dist" "$GRID" "$2" "${MAX_SECONDS:-400}" > "$3" 2>&1
  local rc=$?
  [ -d "$W/profiles" ] || { mkdir -p "$W/profiles" && cp "$2"/profiles/* "$W/profiles/"; }
  grep -E "^\[|^  moving|^wall" "$3" | cut -c1-160
  return $rc
}
one "$A" "$W/out-$A-1" "$OUT/ab-$A-1.txt"
one "$B" "$W/out-$B" "$OUT/ab-$B.txt"
one "$A" "$W/out-$A-2" "$OUT/ab-$A-2.txt"
tar -C "$W" -czf "$OUT/ab.tgz" "out-$A-1" "out-$B" "out-$A-2"
