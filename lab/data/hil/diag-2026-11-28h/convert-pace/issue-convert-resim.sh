#!/bin/bash
# Here (no GPU): each of the ten H200 grids below re-simulated as calibrated, and again with its Llama-3-8B
# profile's gpu.issue_convert_us set to VALUE (nothing else changed); the cells whose pass or fail changes,
# and the passing counts.
#   npm run build && bash lab/data/hil/diag-2026-11-28h/convert-pace/issue-convert-resim.sh 9.2 /tmp/icr
set -u
V=${1:?usage: issue-convert-resim.sh VALUE WORK_DIR}
W=${2:?usage: issue-convert-resim.sh VALUE WORK_DIR}
mkdir -p "$W"
for R in lab/validate/run-3fd69d8-h200-seed197-2026-11-28 lab/validate/run-1d23569-h200-seed193-pooled-2026-11-28 lab/validate/run-fc24601-h200-seed191-2026-11-28 lab/validate/run-f86b03a-h200-seed181-2026-11-28 lab/validate/run-66955ac-h200-seed179-2026-11-28 lab/validate/run-257a842-h200-seed173-2026-11-28 lab/validate/run-dc8b7c6-h200-seed157-2026-11-28 lab/validate/run-4b5fa48-h200-seed127-2026-11-27 lab/validate/run-b93ae8a-h200-seed89-2026-11-27 lab/validate/run-e85f94d-h200-seed61-2026-11-27; do
  n=$(basename "$R")
  rm -rf "$W/src-$n" "$W/asis-$n" "$W/new-$n"
  cp -r "$R" "$W/src-$n"
  python3 - "$W/src-$n/profiles/llama-3-8b.json" "$V" <<'PY'
import json, sys
p = json.load(open(sys.argv[1])); p['gpu']['issue_convert_us'] = float(sys.argv[2]); json.dump(p, open(sys.argv[1], 'w'), indent=2)
PY
  node bin/kvtier.js hil validate-resim "$R" --out "$W/asis-$n" --force --as-calibrated > /dev/null 2>&1
  node bin/kvtier.js hil validate-resim "$W/src-$n" --out "$W/new-$n" --force --as-calibrated > /dev/null 2>&1
  echo "== $n"
  python3 - "$W/asis-$n" "$W/new-$n" <<'PY'
import csv, sys
a = {r['id']: r for r in csv.DictReader(open(sys.argv[1] + '/cells.csv'))}
b = {r['id']: r for r in csv.DictReader(open(sys.argv[2] + '/cells.csv'))}
for k in a:
    if a[k]['status'] == 'ok' and a[k]['pass'] != b[k]['pass']:
        print(f"{k[5:]}: median / p95 {float(a[k]['error_median'])*100:.2f} / {float(a[k]['error_p95'])*100:.2f}% -> {float(b[k]['error_median'])*100:.2f} / {float(b[k]['error_p95'])*100:.2f}%, {a[k]['pass']} -> {b[k]['pass']}")
print('passing', sum(r['pass'] == 'pass' for r in a.values()), '->', sum(r['pass'] == 'pass' for r in b.values()))
PY
done
