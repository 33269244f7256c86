#!/bin/bash
# There (the GPU machine, through the device tool's `run`): the whole HIL confirmation in one call,
# results under $OUT: kernel checks on cuda and host with the default attention options and with
# tensor_cores=off, the benchmarks (copies, attention, overlap, gemv, file, quality), then
# `hil calibrate` and the six-policy `hil compare` on a generated Llama-3-8B 8k trace (64 steps;
# REPEAT=n HIL runs per policy, default 3).
#   bash perf/device/run.sh NAME [checks|compare|all|ab|overlap]   (default all; bundle made by perf/device/bundle.sh NAME)
# CHECKS="name:KEY=v,KEY=v ..." adds attention-only kernel-check runs (cuda + host) with those attention
# options (kvtier hil options) after the default ones (all, checks, ab). ab: instead of the compare,
# attention variants alternated, ROUNDS (default 3) rounds of perf/device/attn-ab.mjs per variant,
# VARIANTS="name:KEY=v,... name2" (a name alone: the defaults). SKIP_CHECKS=1 leaves out the default
# kernel checks and benchmarks
# (for variants of a build whose checks already ran). overlap: perf/device/overlap-ab.mjs, ROUNDS rounds of
# the masking bench's variants (copy direction, kernel, bytes, L2-resident compute).
# $OUT gets a few text files (the device tool brings back only a handful of files) and results.tgz
# with everything else: bench JSONs, profile + fits, compare.json, every run's hil-steps.csv and hil.json.
cd "$(dirname "$0")/../.." || exit 1
NAME=${1:?usage: bash perf/device/run.sh NAME [checks|compare|all|ab|overlap]}
WHAT=${2:-all}
OUT=${OUT:-/tmp/kvtier-device-out}
R=/tmp/kvd/results
# a warm machine keeps /tmp between calls: start from empty result folders
rm -rf "$R" /tmp/kvd/cmp /tmp/kvd/bench*
mkdir -p "$OUT" "$R"
T0=$(date +%s)
xz -dc .device/node.xz > /tmp/kvd/node && chmod +x /tmp/kvd/node
tar -C /tmp/kvd -xJf ".device/$NAME.tar.xz" || exit 1
N=/tmp/kvd/node
B=/tmp/kvd/$NAME
export KVTIER_HIL_ADDON=$B/kvtier_hil.node
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/when.txt"
rc=0
if [ "$WHAT" != compare ] && [ "$WHAT" != overlap ] && [ "${SKIP_CHECKS:-0}" = 0 ]; then
  $N perf/hil-device-check.mjs --dist "$B/dist" --out "$R/bench" > "$OUT/checks-default.txt" 2>&1 || rc=1
  grep -E "checks passed|^FAIL" "$OUT/checks-default.txt"
  grep -E "^attention L=" "$OUT/checks-default.txt" | sed -E 's/steps\/s.*//' | head -40
  grep -E "^TARGET|^overlap:|^prefetch:" "$OUT/checks-default.txt"
  $N perf/hil-device-check.mjs --dist "$B/dist" --out "$R/bench-tc-off" --only attention --attn tensor_cores=off > "$OUT/checks-tc-off.txt" 2>&1 || rc=1
  grep -E "checks passed|^FAIL" "$OUT/checks-tc-off.txt"
  echo "checks + benchmarks: $(( $(date +%s) - T0 )) s"
fi
if [ "$WHAT" != compare ] && [ "$WHAT" != overlap ]; then
  for c in $CHECKS; do
    IFS=: read -r cname cenv <<< "$c"
    attn=()
    for kv in ${cenv//,/ }; do attn+=(--attn "$kv"); done
    $N perf/hil-device-check.mjs --dist "$B/dist" --out "$R/check-$cname" --only attention "${attn[@]}" > "$R/check-$cname.txt" 2>&1 || rc=1
    echo "check $cname ($cenv): $(grep -E 'checks passed|^FAIL' "$R/check-$cname.txt" | tr '\n' ' ')"
  done
fi
if [ "$WHAT" = ab ]; then
  for round in $(seq 1 "${ROUNDS:-3}"); do
    for v in $VARIANTS; do
      [ $(( $(date +%s) - T0 )) -gt "${BUDGET:-520}" ] && { echo "time budget reached at round $round, $v"; break 2; }
      IFS=: read -r vname venv <<< "$v"
      timeout 120 $N perf/device/attn-ab.mjs "$B/dist" "$R/ab-$vname-r$round.json" "$vname" ${venv//,/ } >> "$R/ab.log" 2>&1 || { echo "ab $vname round $round failed"; rc=1; }
    done
  done
  cat "$R/ab.log"
elif [ "$WHAT" = overlap ]; then
  $N perf/device/overlap-ab.mjs "$B/dist" "$R/overlap-ab.json" "${ROUNDS:-3}" || rc=1
elif [ "$WHAT" != checks ]; then
  REPEAT=${REPEAT:-3} $N perf/device/compare.mjs "$B/dist" /tmp/kvd/cmp > "$OUT/compare-log.txt" 2>&1 || rc=1
  tail -32 "$OUT/compare-log.txt"
  mkdir -p "$R/compare"
  cp /tmp/kvd/cmp/profile.json /tmp/kvd/cmp/profile.fit.json /tmp/kvd/cmp/compare/compare.json "$R/compare/" 2>/dev/null
  for d in /tmp/kvd/cmp/compare/hil-*; do
    [ -d "$d" ] || continue
    cp "$d/hil-steps.csv" "$R/compare/$(basename "$d")-steps.csv" 2>/dev/null
    cp "$d/hil.json" "$R/compare/$(basename "$d").json" 2>/dev/null
  done
fi
tar -C "$R" -czf "$OUT/results.tgz" .
echo "total $(( $(date +%s) - T0 )) s, rc $rc"
exit $rc
