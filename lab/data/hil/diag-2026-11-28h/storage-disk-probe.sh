#!/bin/bash
# Here (no GPU): every stored H200 validate run re-simulated with this build twice, as calibrated and with
# each storage cell's storage link fitted to the disk probe taken right before its runs
# (validate-resim --disk-as-measured), then the storage cells side by side (storage-disk-probe.py).
#   npm run build && bash lab/data/hil/diag-2026-11-28h/storage-disk-probe.sh /tmp/dk
set -u
W=${1:?usage: storage-disk-probe.sh WORK_DIR}
mkdir -p "$W"
one() {
  n=$(basename "$1")
  node bin/kvtier.js hil validate-resim "$1" --out "$W/asis-$n" --force --as-calibrated > "$W/asis-$n.log" 2>&1 || { echo "skipped $n: $(tail -1 "$W/asis-$n.log")"; return; }
  node bin/kvtier.js hil validate-resim "$1" --out "$W/disk-$n" --force --as-calibrated --disk-as-measured > "$W/disk-$n.log" 2>&1 || echo "skipped $n (disk as probed)"
}
for r in lab/validate/run-*h200*; do one "$r" & [ "$(jobs -r | wc -l)" -ge 2 ] && wait -n; done
wait
python3 "$(dirname "$0")/storage-disk-probe.py" "$W"
