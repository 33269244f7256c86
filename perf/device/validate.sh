#!/bin/bash
# The held-out validation grid (kvtier hil validate) on the GPU machine, in one call that fits the
# device tool's 600 s: calibration per model at contexts the grid never uses, then the cells, cheapest
# contexts first; no cell is started that would end past MAX_SECONDS (default 500) after the start,
# and the whole command is cut at LIMIT s (default 580; less where other work shares the call). A cut run leaves its finished cells in /tmp/kvd/validate: a
# second call on the same warm machine resumes there (FRESH=1 starts over).
#   here:  bash perf/device/validate.sh pack NAME     (perf/device/bundle.sh NAME, plus the YAML reader the
#          grid file needs: .device/validate-mods.tar.xz)
#   there: bash perf/device/validate.sh run NAME [GRID]   (default lab/validate/grid.json;
#          carry: .device/node.xz .device/NAME.tar.xz .device/validate-mods.tar.xz)
#   here, after:  node bin/kvtier.js hil validate-report DIR   (DIR: validate.tgz from $OUT, unpacked)
# $OUT gets validate-log.txt, summary.txt and validate.tgz (validate.json, cells.csv, cells/, profiles/).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
MODE=${1:?usage: bash perf/device/validate.sh pack|run NAME [GRID]}
NAME=${2:?usage: bash perf/device/validate.sh pack|run NAME [GRID]}
case "$MODE" in
  pack)
    set -e
    bash perf/device/bundle.sh "$NAME"
    tar -cJf .device/validate-mods.tar.xz node_modules/yaml
    du -ch .device/node.xz ".device/$NAME.tar.xz" .device/validate-mods.tar.xz | tail -1
    echo "carry: [\".device/node.xz\", \".device/$NAME.tar.xz\", \".device/validate-mods.tar.xz\"]   command: bash perf/device/validate.sh run $NAME"
    ;;
  run)
    GRID=${3:-lab/validate/grid.json}
    OUT=${OUT:-/tmp/kvtier-device-out}
    V=/tmp/kvd/validate
    mkdir -p "$OUT" /tmp/kvd
    T0=$(date +%s)
    # FRESH=1: forget the cells and profiles of earlier calls on this machine (else they are reused
    # where their settings, profile and backend match, whatever the bundle)
    [ "${FRESH:-0}" = 1 ] && rm -rf "$V"
    if [ "${KEEP_BUNDLE:-0}" != 1 ]; then
      xz -dc .device/node.xz > /tmp/kvd/node && chmod +x /tmp/kvd/node || exit 1
      rm -rf "/tmp/kvd/$NAME" && tar -C /tmp/kvd -xJf ".device/$NAME.tar.xz" || exit 1
      tar -C "/tmp/kvd/$NAME" -xJf .device/validate-mods.tar.xz || exit 1
    fi
    B=/tmp/kvd/$NAME
    export KVTIER_HIL_ADDON=$B/kvtier_hil.node
    { date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; df -h /tmp | tail -1; } | tee "$OUT/when.txt"
    LEFT=$(( ${LIMIT:-580} - ($(date +%s) - T0) ))
    timeout "$LEFT" /tmp/kvd/node perf/device/validate.mjs "$B/dist" "$GRID" "$V" "${MAX_SECONDS:-500}" > "$OUT/validate-log.txt" 2>&1
    rc=$?
    [ $rc = 124 ] && echo "cut at the time limit: the finished cells are in $V/cells; run again on the same machine to resume" | tee -a "$OUT/validate-log.txt"
    grep -E "^plan:|^\[|^hardware|^  tier|^cells:|^  (moving|per)|^note|^wall" "$OUT/validate-log.txt" | tail -60
    sed -n '/^pools/,$p' "$OUT/validate-log.txt" > "$OUT/summary.txt"
    tar -C "$V" -czf "$OUT/validate.tgz" --exclude=traces .
    echo "total $(( $(date +%s) - T0 )) s, rc $rc"
    exit $rc
    ;;
  *) echo "usage: bash perf/device/validate.sh pack|run NAME [GRID]" >&2; exit 2 ;;
esac
