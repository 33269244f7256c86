# Here: each of eight stored H200 grids simulated again with its host-link copy terms at their medians
# over the other seven grids' Llama-3-8B calibrations (hil validate-resim --copy-terms-from), and as
# calibrated, with this build; then the pools side by side (pooled-loo.py).
#   npm run build && bash lab/data/hil/diag-2026-11-28f/pooled-loo.sh /tmp/pooled-loo
set -euo pipefail
W=${1:?usage: pooled-loo.sh WORK_DIR}
mkdir -p "$W"
RUNS="run-257a842-h200-seed173-2026-11-28 run-4b5fa48-h200-seed127-2026-11-27 run-66955ac-h200-seed179-2026-11-28 run-b93ae8a-h200-seed89-2026-11-27 run-dc8b7c6-h200-seed157-2026-11-28 run-e85f94d-h200-seed61-2026-11-27 run-f86b03a-h200-seed181-2026-11-28 run-fc24601-h200-seed191-2026-11-28"
for r in $RUNS; do
  others=""
  for o in $RUNS; do [ "$o" != "$r" ] && others="$others lab/validate/$o/profiles/llama-3-8b.json"; done
  node bin/kvtier.js hil validate-resim "lab/validate/$r" --out "$W/asis/$r" --force > "$W/asis-$r.log"
  # shellcheck disable=SC2086
  node bin/kvtier.js hil validate-resim "lab/validate/$r" --out "$W/pooled/$r" --force --copy-terms-from $others > "$W/pooled-$r.log"
done
python3 lab/data/hil/diag-2026-11-28f/pooled-loo.py "$W" $RUNS
