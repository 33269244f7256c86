#!/bin/bash
# On the GPU machine: the host's time per copy and per event record issued to the GPU, pinned to each
# CPU in turn (issue-by-cpu.cu), twice over, with the machine's CPU and NUMA layout and the GPU's local
# CPUs. Nothing else runs meanwhile.
#   there: bash lab/data/hil/diag-2026-11-28h/issue-by-cpu.sh     ($OUT gets issue-by-cpu.jsonl, topo.txt)
set -uo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/kvtier-device-out}
mkdir -p "$OUT"
nvcc -O2 -o /tmp/ibc issue-by-cpu.cu || exit 1
{
  date -u; lscpu; echo; numactl -H 2>&1 | head -20; echo; nvidia-smi topo -m 2>&1; echo
  for d in /sys/bus/pci/devices/*; do [ "$(cat $d/vendor 2>/dev/null)" = 0x10de ] && echo "$d local_cpulist $(cat $d/local_cpulist) numa_node $(cat $d/numa_node)"; done
  grep -H . /sys/devices/system/cpu/cpu*/topology/thread_siblings_list 2>/dev/null | sed 's|/sys/devices/system/cpu/||' | sort -V
  grep MHz /proc/cpuinfo
} > "$OUT/topo.txt" 2>&1
N=$(nproc)
for pass in 1 2; do
  for c in $(seq 0 $((N - 1))); do taskset -c "$c" /tmp/ibc 15 | sed "s/^{/{\"pass\":$pass,\"pinned\":$c,/" >> "$OUT/issue-by-cpu.jsonl"; done
  for k in 1 2 3 4 5 6; do /tmp/ibc 15 | sed "s/^{/{\"pass\":$pass,\"pinned\":-1,/" >> "$OUT/issue-by-cpu.jsonl"; done
done
cat "$OUT/issue-by-cpu.jsonl"
