// Host time per cudaMemcpyAsync (pinned host -> device, 17,408 B, one stream, no waiting) and per
// cudaEventRecord, as the HIL executor issues them, on the CPU this process is pinned to (taskset).
//   nvcc -O2 -o /tmp/ibc issue-by-cpu.cu && taskset -c N /tmp/ibc ROUNDS
// Prints one JSON line: the CPU it ran on, the median and spread over rounds of the per-copy and
// per-record time (each round: 2,000 copies then 2,000 records, then a synchronize).
#include <cuda_runtime.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <algorithm>
#include <vector>
static double now_us() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec * 1e-3; }
int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 15;
  const size_t bytes = 17408, slot = 65536, n = 2000;
  char* host; char* dev;
  cudaHostAlloc((void**)&host, slot * n, cudaHostAllocDefault);
  cudaMalloc((void**)&dev, bytes * n);
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaEvent_t ev; cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
  std::vector<double> copy_us, rec_us;
  for (int r = 0; r < rounds + 2; r++) {
    double t0 = now_us();
    for (size_t i = 0; i < n; i++) cudaMemcpyAsync(dev + i * bytes, host + i * slot, bytes, cudaMemcpyHostToDevice, s);
    double t1 = now_us();
    for (size_t i = 0; i < n; i++) cudaEventRecord(ev, s);
    double t2 = now_us();
    cudaStreamSynchronize(s);
    if (r >= 2) { copy_us.push_back((t1 - t0) / n); rec_us.push_back((t2 - t1) / n); }
  }
  std::sort(copy_us.begin(), copy_us.end());
  std::sort(rec_us.begin(), rec_us.end());
  size_t m = copy_us.size();
  printf("{\"cpu\":%d,\"copy_us\":%.3f,\"copy_us_min\":%.3f,\"copy_us_max\":%.3f,\"record_us\":%.3f,\"record_us_min\":%.3f,\"record_us_max\":%.3f}\n",
         sched_getcpu(), copy_us[m / 2], copy_us[0], copy_us[m - 1], rec_us[m / 2], rec_us[0], rec_us[m - 1]);
  return 0;
}
