#!/usr/bin/env bash
# Samples the GPU's power (nvidia-smi, every 100 ms) idle, under an HBM-bound copy and under an FMA
# chain; writes the samples and a summary to $OUT (or ./out). Run on the machine with the GPU.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-./out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,pci.bus_id,driver_version,power.limit,power.default_limit,power.max_limit,enforced.power.limit --format=csv >"$out/gpu.csv"
nvcc -O3 -arch=sm_90 -o /tmp/gpu-power "$here/gpu-power.cu"
sample() { nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm,clocks.mem,utilization.gpu,temperature.gpu --format=csv,noheader,nounits -lms 100 >"$out/$1.csv" & echo $!; }
p=$(sample idle); sleep 15; kill "$p"
p=$(sample copy); /tmp/gpu-power copy 20 | tee "$out/copy.txt"; kill "$p"
sleep 5
p=$(sample fma); /tmp/gpu-power fma 20 | tee "$out/fma.txt"; kill "$p"
sleep 5
p=$(sample idle-after); sleep 15; kill "$p"
for f in idle copy fma idle-after; do
  awk -F', ' -v name="$f" '{ n++; s += $2; if (n == 1 || $2 < lo) lo = $2; if ($2 > hi) hi = $2; a[n] = $2 } END {
    # steady state: drop the first and last 2 s of samples
    m = 0; t = 0; for (i = 21; i <= n - 20; i++) { m++; t += a[i] }
    printf "%s: %d samples, mean %.1f W (steady %.1f W over %d), min %.1f, max %.1f\n", name, n, s / n, m ? t / m : 0, m, lo, hi }' "$out/$f.csv"
done | tee "$out/summary.txt"
