#!/bin/bash
# Diagnostic: does pinned host->device copy bandwidth depend on where the host buffer lives (NUMA node
# of the CPUs that first touch it) or drift over time? Prints the topology, then H2D/D2H GB/s of 64 MiB
# pinned copies (PyTorch, CUDA events) for a process bound to each node's CPUs, in rounds.
#   there: bash perf/device/pcie-numa.sh   ($OUT gets pcie-numa.txt)
OUT=${OUT:-/tmp/kvtier-device-out}; mkdir -p "$OUT"
{
  date -u; nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader
  lscpu | grep -E "NUMA|Model name|^CPU\(s\)"
  BUS=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1 | tr 'A-F' 'a-f' | sed 's/^0000//; s/^/0000/')
  for d in /sys/bus/pci/devices/*; do [ "$(basename $d)" = "${BUS:4}" ] || [ "$(basename $d)" = "$BUS" ] && echo "gpu $d numa_node $(cat $d/numa_node) local_cpus $(cat $d/local_cpulist)"; done
  ls /sys/devices/system/node/ | grep node
  nvidia-smi topo -m 2>&1 | head -5
  cat > /tmp/bw.py <<'PY'
import torch, sys, time
n = 64 << 20
h = torch.empty(n, dtype=torch.uint8).pin_memory(); h.fill_(1)
d = torch.empty(n, dtype=torch.uint8, device='cuda')
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
out = []
for r in range(int(sys.argv[2])):
    for name, f in (('h2d', lambda: d.copy_(h, non_blocking=True)), ('d2h', lambda: h.copy_(d, non_blocking=True))):
        f(); torch.cuda.synchronize()
        s.record()
        for _ in range(10): f()
        e.record(); torch.cuda.synchronize()
        out.append(f"{name} {10 * n / (s.elapsed_time(e) * 1e6):.2f}")
print(sys.argv[1], ' '.join(out), flush=True)
PY
  for node in $(ls /sys/devices/system/node/ | grep -o 'node[0-9]*' | tr -d node); do
    cpus=$(cat /sys/devices/system/node/node$node/cpulist)
    taskset -c "$cpus" python3 /tmp/bw.py "cpus-of-node$node($cpus)" 3
  done
  python3 /tmp/bw.py unbound 3
  for i in 1 2 3 4 5 6; do python3 /tmp/bw.py "unbound-round-$i" 2; done
  date -u
} > "$OUT/pcie-numa.txt" 2>&1
cat "$OUT/pcie-numa.txt"
