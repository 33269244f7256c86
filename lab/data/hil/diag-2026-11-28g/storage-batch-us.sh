# Here: every stored H200 validate run re-simulated with this build twice, as calibrated and with the
# NVMe read direction fitted again from its own calibration's measurements with a fixed time per batch
# (lab/validate/tools/with-batch-us.mjs), then the storage cells side by side (storage-batch-us.py).
#   npm run build && bash lab/data/hil/diag-2026-11-28g/storage-batch-us.sh /tmp/bu
set -u
W=${1:?usage: storage-batch-us.sh WORK_DIR}
mkdir -p "$W"
one() {
  n=$(basename "$1")
  rm -rf "$W/src-$n"
  node bin/kvtier.js hil validate-resim "$1" --out "$W/asis-$n" --force --as-calibrated > "$W/asis-$n.log" 2>&1 || { echo "skipped $n: $(tail -1 "$W/asis-$n.log")"; return; }
  node lab/validate/tools/with-batch-us.mjs "$1" "$W/src-$n" > "$W/bu-$n.log" 2>&1 &&
    node bin/kvtier.js hil validate-resim "$W/src-$n" --out "$W/new-$n" --force --as-calibrated > "$W/new-$n.log" 2>&1 || echo "skipped $n (refitted)"
}
for r in lab/validate/run-*h200*; do one "$r" & [ "$(jobs -r | wc -l)" -ge 2 ] && wait -n; done
wait
python3 lab/data/hil/diag-2026-11-28g/storage-batch-us.py "$W"
