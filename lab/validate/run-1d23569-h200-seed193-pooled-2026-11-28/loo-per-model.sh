# Here: nine stored H200 grids (the eight of lab/data/hil/diag-2026-11-28f/pooled-loo.sh and this one)
# simulated again as calibrated and with each model's host-link copy terms at their medians over the
# other eight grids' calibrations of that model (hil validate-resim --as-calibrated --copy-terms-from;
# the pool split per model by file name), then the pools side by side (pooled-loo.py).
#   npm run build && bash lab/validate/run-1d23569-h200-seed193-pooled-2026-11-28/loo-per-model.sh /tmp/loo9
set -euo pipefail
W=${1:?usage: loo-per-model.sh WORK_DIR}
mkdir -p "$W"
RUNS="run-257a842-h200-seed173-2026-11-28 run-4b5fa48-h200-seed127-2026-11-27 run-66955ac-h200-seed179-2026-11-28 run-b93ae8a-h200-seed89-2026-11-27 run-dc8b7c6-h200-seed157-2026-11-28 run-e85f94d-h200-seed61-2026-11-27 run-f86b03a-h200-seed181-2026-11-28 run-fc24601-h200-seed191-2026-11-28 run-1d23569-h200-seed193-pooled-2026-11-28"
for r in $RUNS; do
  others=""
  for o in $RUNS; do
    [ "$o" != "$r" ] && for m in llama-3-8b llama-2-7b kvtier-brown-gpt; do others="$others lab/validate/$o/profiles/$m.json"; done
  done
  node bin/kvtier.js hil validate-resim "lab/validate/$r" --out "$W/asis/$r" --force --as-calibrated > "$W/asis-$r.log"
  # shellcheck disable=SC2086
  node bin/kvtier.js hil validate-resim "lab/validate/$r" --out "$W/pooled/$r" --force --as-calibrated --copy-terms-from $others > "$W/pooled-$r.log"
done
python3 lab/data/hil/diag-2026-11-28f/pooled-loo.py "$W" $RUNS
