#!/bin/bash
# There (the GPU machine, through the device tool's `run`): does the host's issue pace per copy wander
# less when the issuing process is bound to CPUs? perf/device/issue-plans.mjs in separate processes, the
# variants alternated REPS times: unbound, bound to one CPU of the GPU's NUMA node, bound to four of them.
# Per process ROUNDS rounds of PLANS (default: copy-bound Llama-3-8B 8k cells). $OUT gets the log, the
# machine's CPU list and every process's JSON.
#   bash perf/device/pace-pin.sh NAME      (bundle made by perf/device/bundle.sh NAME)
cd "$(dirname "$0")/../.." || exit 1
NAME=${1:?usage: bash perf/device/pace-pin.sh NAME}
OUT=${OUT:-/tmp/kvtier-device-out}
mkdir -p "$OUT" /tmp/kvd
T0=$(date +%s)
[ -x /tmp/kvd/node ] || { xz -dc .device/node.xz > /tmp/kvd/node && chmod +x /tmp/kvd/node; }
[ -d "/tmp/kvd/$NAME" ] || tar -C /tmp/kvd -xJf ".device/$NAME.tar.xz" || exit 1
N=/tmp/kvd/node
B=/tmp/kvd/$NAME
export KVTIER_HIL_ADDON=$B/kvtier_hil.node
export PLANS=${PLANS:-kivi:10%:8192,uniform-int8:10%:8192,uniform-int8:20%:8192,smartkv:10%:8192}
ROUNDS=${ROUNDS:-3}
{
  date -u; nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader
  lscpu | grep -E "NUMA|Model name|^CPU\(s\)|Hypervisor"
} > "$OUT/pace-pin-machine.txt" 2>&1
BUS=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1 | tr 'A-F' 'a-f')
LOCAL=$(cat "/sys/bus/pci/devices/${BUS:4}/local_cpulist" 2>/dev/null || cat "/sys/bus/pci/devices/$BUS/local_cpulist" 2>/dev/null || echo "0-$(( $(nproc) - 1 ))")
# the GPU-local CPUs as a list; skip the first (interrupts tend to land on CPU 0)
CPUS=($(python3 -c "import sys
out=[]
for part in sys.argv[1].split(','):
    a,_,b=part.partition('-'); out+=range(int(a),int(b or a)+1)
print(' '.join(map(str,out)))" "$LOCAL"))
ONE=${CPUS[1]:-${CPUS[0]}}
FOUR=$(IFS=,; echo "${CPUS[*]:1:4}")
echo "gpu-local cpus $LOCAL; one: $ONE; four: $FOUR" | tee -a "$OUT/pace-pin-machine.txt"
for rep in $(seq 1 "${REPS:-2}"); do
  for v in unbound one four; do
    [ $(( $(date +%s) - T0 )) -gt "${BUDGET:-480}" ] && { echo "time budget reached at rep $rep, $v"; break 2; }
    case $v in
      unbound) pre=() ;;
      one) pre=(taskset -c "$ONE") ;;
      four) pre=(taskset -c "$FOUR") ;;
    esac
    echo "== rep $rep $v ($(date -u +%T))"
    "${pre[@]}" $N perf/device/issue-plans.mjs "$B/dist" "$OUT/pace-$v-$rep.json" "$ROUNDS" 2>&1 | grep -E "^round|issue costs|Error"
  done
done 2>&1 | tee "$OUT/pace-pin.txt"
echo "total $(( $(date +%s) - T0 )) s"
