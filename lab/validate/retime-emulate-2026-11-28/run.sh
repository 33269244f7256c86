#!/bin/bash
cd "$(dirname "$0")/../../.." && mkdir -p ${OUT:-/tmp/re}
V=lab/validate
pair() { # run other
  n=$(basename $1 | cut -d- -f2,4-5); o=$(basename $2 | cut -d- -f2)
  [ -d ${OUT:-/tmp/re}/base-$n ] || node bin/kvtier.js hil validate-resim $1 --out ${OUT:-/tmp/re}/base-$n --force > /dev/null 2>&1
  rm -rf ${OUT:-/tmp/re}/in-$n-x-$o
  node lab/validate/tools/retime-emulate.mjs $1 $2 ${OUT:-/tmp/re}/in-$n-x-$o > ${OUT:-/tmp/re}/in-$n-x-$o.log 2>&1
  node bin/kvtier.js hil validate-resim ${OUT:-/tmp/re}/in-$n-x-$o --out ${OUT:-/tmp/re}/out-$n-x-$o --force > /dev/null 2>&1
  echo "== $n with the second timing from $o"; cat ${OUT:-/tmp/re}/in-$n-x-$o.log
  echo "-- as calibrated (this build)"; node lab/validate/tools/pools.mjs ${OUT:-/tmp/re}/base-$n | grep "^| generated"
  echo "-- lesser of the two"; node lab/validate/tools/pools.mjs ${OUT:-/tmp/re}/out-$n-x-$o | grep "^| generated"
}
pair $V/run-66955ac-h200-seed179-2026-11-28 $V/run-257a842-h200-seed173-2026-11-28
pair $V/run-257a842-h200-seed173-2026-11-28 $V/run-66955ac-h200-seed179-2026-11-28
pair $V/run-5ff82bb-h200-ordered-seed163-2026-11-28 $V/run-257a842-h200-seed173-2026-11-28
pair $V/run-dc8b7c6-h200-seed157-2026-11-28 $V/run-257a842-h200-seed173-2026-11-28
pair $V/run-4b5fa48-h200-seed127-2026-11-27 $V/run-b93ae8a-h200-seed89-2026-11-27
pair $V/run-b93ae8a-h200-seed89-2026-11-27 $V/run-4b5fa48-h200-seed127-2026-11-27
pair $V/run-e85f94d-h200-seed61-2026-11-27 $V/run-b93ae8a-h200-seed89-2026-11-27
pair $V/run-06bb2f0-h100-seed167-2026-11-28 $V/run-446a014-h100-seed137-2026-11-28
pair $V/run-446a014-h100-seed137-2026-11-28 $V/run-06bb2f0-h100-seed167-2026-11-28
