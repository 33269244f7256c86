#!/bin/bash
# The stored grids with phased Llama-2-7B calibrations re-simulated as stored (base) and with the tail
# wave priced (lab/experiments/tail-wave-profiles.mjs), into $OUT (default /tmp/tw); run from the repo root
# after npm run build:
#   bash lab/validate/resim-tail-wave-2026-11-28/resim-all.sh A
OUT=${OUT:-/tmp/tw}
mkdir -p $OUT
HERE=lab/validate/resim-tail-wave-2026-11-28
for d in lab/validate/run-06bb2f0-h100-seed167-2026-11-28 lab/validate/run-1398a65-h100-seed109-2026-11-27 lab/validate/run-257a842-h200-seed173-2026-11-28 lab/validate/run-2dcf563-h100-seed53-2026-11-27 lab/validate/run-446a014-h100-seed137-2026-11-28 lab/validate/run-4b5fa48-h200-seed127-2026-11-27 lab/validate/run-5a94d76-h100-seed113-2026-11-27 lab/validate/run-60279c3-h100-seed41-2026-11-27 lab/validate/run-7f4a423-h100-seed103-2026-11-27 lab/validate/run-b93ae8a-h200-seed89-2026-11-27 lab/validate/run-dc8b7c6-h200-seed157-2026-11-28 lab/validate/run-e85f94d-h200-seed61-2026-11-27; do
  n=$(basename $d)
  [ -d $OUT/base-$n ] || node bin/kvtier.js hil validate-resim $d --out $OUT/base-$n --force > /dev/null 2>&1
  rm -rf $OUT/in-$1-$n $OUT/$1-$n
  node lab/experiments/tail-wave-profiles.mjs $d $OUT/in-$1-$n $EXTRA | grep llama-2 | cut -c1-60
  node bin/kvtier.js hil validate-resim $OUT/in-$1-$n --out $OUT/$1-$n --force > /dev/null 2>&1
  echo "== $n"; python3 $HERE/cells-changed.py $OUT/base-$n $OUT/$1-$n llama-2 | grep -v "quest\|smartkv\|kivi\|uniform\|infinigen\|dpnc\|oracle\|synapse\|lru\|arc\|flexgen\|slep\|ntrans\|fifo\|lfu"
done
