#!/bin/bash
# On the GPU machine: SmartKV on seed 197's broad 8k trace (Llama-3-8B) at 40% and 20%, one HIL run each with
# every step's spans in trace.json, priced by that grid's calibrated profile.
#   here:  node bin/kvtier.js hil validate-resim lab/validate/run-3fd69d8-h200-seed197-2026-11-28 --out /tmp/r197 --as-calibrated
#          mkdir -p tmp-smartkv && cp /tmp/r197/traces/broad-every-policy-llama-3-8b-8k-s197.kvt tmp-smartkv/skt.kvt
#          cp lab/validate/run-3fd69d8-h200-seed197-2026-11-28/profiles/llama-3-8b.json tmp-smartkv/skp.json
#   there: bash lab/data/hil/diag-2026-11-28h/smartkv-hil-s197/hil-run.sh   (carry .device/node.xz .device/v197.tar.xz)
set -u
mkdir -p /tmp/kvd && xz -dc .device/node.xz > /tmp/kvd/node && chmod +x /tmp/kvd/node && tar -C /tmp/kvd -xJf .device/v197.tar.xz || exit 1
mkdir -p /tmp/kvd/v197/bin && cp bin/kvtier.js /tmp/kvd/v197/bin/
export KVTIER_HIL_ADDON=/tmp/kvd/v197/kvtier_hil.node
date -u > $OUT/when.txt
for b in 40 20; do
  /tmp/kvd/node /tmp/kvd/v197/bin/kvtier.js hil run --trace tmp-smartkv/skt.kvt --policy smartkv --hardware tmp-smartkv/skp.json --hbm-budget $b% --model llama-3-8b --group-size 128 --trace-steps 16 --backend cuda --out /tmp/hr$b > $OUT/hil-run-$b.log 2>&1; echo "rc $? $b"
  tar -C /tmp/hr$b -czf $OUT/hil-run-$b.tgz .
done
