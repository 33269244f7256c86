cd "$(dirname "$0")/../../.." && git apply lab/validate/size-extra-2026-11-28/size-extra.patch && npm run build > /dev/null
for d in lab/validate/run-66955ac-h200-seed179-2026-11-28 lab/validate/run-257a842-h200-seed173-2026-11-28 lab/validate/run-bf4f71f-h200-retime-seed179-2026-11-28 lab/validate/run-06bb2f0-h100-seed167-2026-11-28; do
  n=$(basename $d | cut -d- -f2)
  [ -d /tmp/sz/base-$n ] || node bin/kvtier.js hil validate-resim $d --out /tmp/sz/base-$n --force > /dev/null 2>&1
  rm -rf /tmp/sz/in-$n; node lab/validate/tools/rebuild-profiles.mjs $d /tmp/sz/in-$n > /dev/null 2>&1
  node bin/kvtier.js hil validate-resim /tmp/sz/in-$n --out /tmp/sz/out-$n --force > /dev/null 2>&1
  echo "== $n"; echo "-- as calibrated"; node lab/validate/tools/pools.mjs /tmp/sz/base-$n | grep -E "^\| (generated|uniform|smartkv|kivi|lru-offload|arc|quest|synapsevm|dpnc|infinigen|oracle|flexgen)"
  echo "-- with size_extra_us"; node lab/validate/tools/pools.mjs /tmp/sz/out-$n | grep -E "^\| (generated|uniform|smartkv|kivi|lru-offload|arc|quest|synapsevm|dpnc|infinigen|oracle|flexgen)"
done
