// File-tier read benchmark for the HIL's NVMe tier (O_DIRECT, a persistent pool of pread threads).
//   nvme-bench DIR MODE [REPLAY_FILE]     (results as JSON lines on stdout)
// MODE: matrix   threads x request size, random and sequential offsets, batches of 32 MiB
//       replay   the executor's own read batches (REPLAY_FILE: "FILEBYTES", then per batch "B step n" + n lines
//                "offset bytes"), per-run requests vs threads, chunked, span and contiguous layouts
//       timeline one configuration (env T, CHUNK, LAYOUT=runs|contig) over all steps, ROUNDS times: per-step read time;
//                GAP_US idles that long between batches (not counted), BATCHES=1 adds each batch's requests and ms
// The file is created in DIR, filled with O_DIRECT writes and removed at the end; the fill ends with fdatasync
// unless FILL_SYNC=0 (the writes then may still sit in a virtual disk's host-side cache when the reads start).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct { uint64_t off; uint64_t len; char* dst; } Req;

static int fd;
static Req* reqs;
static atomic_size_t next_req;
static size_t n_reqs;
static atomic_size_t done_reqs;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv_go = PTHREAD_COND_INITIALIZER, cv_done = PTHREAD_COND_INITIALIZER;
static int generation, quit;
static int active_threads;
/* workers inside a batch's request loop: run_batch returns only once they have all left it, so that
   none can take requests of the next batch (which would run more threads than asked for) */
static int busy;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void* worker(void* arg) {
  long id = (long)arg;
  int seen = 0;
  for (;;) {
    pthread_mutex_lock(&mu);
    while (generation == seen && !quit) pthread_cond_wait(&cv_go, &mu);
    if (quit) { pthread_mutex_unlock(&mu); return NULL; }
    seen = generation;
    int mine = id < active_threads;
    if (mine) busy++;
    pthread_mutex_unlock(&mu);
    if (!mine) continue;
    for (;;) {
      size_t i = atomic_fetch_add(&next_req, 1);
      if (i >= n_reqs) break;
      Req* r = &reqs[i];
      uint64_t done = 0;
      while (done < r->len) {
        ssize_t k = pread(fd, r->dst + done, r->len - done, (off_t)(r->off + done));
        if (k < 0) { if (errno == EINTR) continue; perror("pread"); exit(2); }
        if (k == 0) { fprintf(stderr, "eof\n"); exit(2); }
        done += (uint64_t)k;
      }
      atomic_fetch_add(&done_reqs, 1);
    }
    pthread_mutex_lock(&mu);
    busy--;
    pthread_cond_signal(&cv_done);
    pthread_mutex_unlock(&mu);
  }
}

#define MAXT 64
static pthread_t th[MAXT];

// runs reqs[0..n) on t threads, returns seconds
static double run_batch(Req* r, size_t n, int t) {
  double t0 = now_s();
  pthread_mutex_lock(&mu);
  /* a worker that woke late for the previous batch has registered (busy) and finds it exhausted: let it
     leave before the counters are reset, or it would serve this batch without being one of its t */
  while (busy > 0) pthread_cond_wait(&cv_done, &mu);
  reqs = r;
  n_reqs = n;
  atomic_store(&next_req, 0);
  atomic_store(&done_reqs, 0);
  active_threads = t;
  generation++;
  pthread_cond_broadcast(&cv_go);
  while (atomic_load(&done_reqs) < n || busy > 0) pthread_cond_wait(&cv_done, &mu);
  pthread_mutex_unlock(&mu);
  return now_s() - t0;
}

static int cmpd(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}
static double q(double* v, int n, double p) {
  double* s = malloc(sizeof(double) * n);
  memcpy(s, v, sizeof(double) * n);
  qsort(s, n, sizeof(double), cmpd);
  double x = s[(int)(p * (n - 1) + 0.5)];
  free(s);
  return x;
}
static double mean(double* v, int n) { double s = 0; for (int i = 0; i < n; i++) s += v[i]; return s / n; }
static double cv(double* v, int n) {
  double m = mean(v, n), s = 0;
  for (int i = 0; i < n; i++) s += (v[i] - m) * (v[i] - m);
  return n > 1 ? (s / (n - 1) > 0 ? __builtin_sqrt(s / (n - 1)) / m : 0) : 0;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t xr(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

static char* buf;
static uint64_t file_bytes;

static void fill_file(void) {
  size_t w = 8 << 20;
  for (size_t i = 0; i < w; i += 8) *(uint64_t*)(buf + i) = xr();
  double t0 = now_s();
  for (uint64_t off = 0; off < file_bytes; off += w) {
    size_t len = file_bytes - off < w ? file_bytes - off : w;
    if (pwrite(fd, buf, len, (off_t)off) != (ssize_t)len) { perror("pwrite"); exit(2); }
  }
  if (!getenv("FILL_SYNC") || atoi(getenv("FILL_SYNC")) != 0) fdatasync(fd);
  double dt = now_s() - t0;
  printf("{\"kind\":\"fill\",\"bytes\":%llu,\"s\":%.4f,\"GBps\":%.3f}\n", (unsigned long long)file_bytes, dt, file_bytes / dt / 1e9);
  fflush(stdout);
}

static void matrix(void) {
  const int ts[] = {1, 2, 4, 8, 16, 32};
  const uint64_t rs[] = {64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20};
  const uint64_t batch = 32 << 20;
  const int nb = 12;
  Req* r = malloc(sizeof(Req) * (batch / (64 << 10)));
  double tms[64];
  int rounds = getenv("ROUNDS") ? atoi(getenv("ROUNDS")) : 2;
  for (int round = 0; round < rounds; round++)
    for (int pat = 0; pat < 2; pat++)
      for (unsigned ri = 0; ri < sizeof rs / sizeof rs[0]; ri++)
        for (unsigned ti = 0; ti < sizeof ts / sizeof ts[0]; ti++) {
          uint64_t R = rs[ri];
          size_t n = batch / R;
          for (int b = 0; b <= nb; b++) {
            uint64_t base = (xr() % (file_bytes / batch)) * batch;
            for (size_t i = 0; i < n; i++) {
              uint64_t off = pat == 0 ? (xr() % (file_bytes / R)) * R : base + i * R;
              r[i] = (Req){off, R, buf + (off % (file_bytes - R + 1) & ~4095ull)};
            }
            double s = run_batch(r, n, ts[ti]);
            if (b > 0) tms[b - 1] = s;  // first batch is a warm-up
          }
          double med = q(tms, nb, 0.5);
          printf("{\"kind\":\"matrix\",\"round\":%d,\"pattern\":\"%s\",\"threads\":%d,\"request\":%llu,\"batch\":%llu,\"GBps_median\":%.3f,\"GBps_p5\":%.3f,\"GBps_p95\":%.3f,\"cv\":%.4f,\"ms_median\":%.3f}\n",
                 round, pat == 0 ? "random" : "sequential", ts[ti], (unsigned long long)R, (unsigned long long)batch,
                 batch / med / 1e9, batch / q(tms, nb, 0.95) / 1e9, batch / q(tms, nb, 0.05) / 1e9, cv(tms, nb), med * 1e3);
          fflush(stdout);
        }
  free(r);
}

// ---- replay ----
typedef struct { int step; size_t first, n; uint64_t bytes, lo, hi; } Batch;
static Req* all;
static size_t n_all;
static Batch* batches;
static size_t n_batches;

static void load_replay(const char* path) {
  FILE* f = fopen(path, "r");
  if (!f) { perror(path); exit(2); }
  unsigned long long fb;
  if (fscanf(f, "%llu", &fb) != 1) exit(2);
  size_t cap = 1 << 17, bcap = 1 << 12;
  all = malloc(sizeof(Req) * cap);
  batches = malloc(sizeof(Batch) * bcap);
  char tag[4];
  int step;
  size_t n;
  while (fscanf(f, "%3s %d %zu", tag, &step, &n) == 3) {
    if (n_batches == bcap) batches = realloc(batches, sizeof(Batch) * (bcap *= 2));
    Batch* b = &batches[n_batches++];
    *b = (Batch){step, n_all, n, 0, UINT64_MAX, 0};
    for (size_t i = 0; i < n; i++) {
      unsigned long long o, l;
      if (fscanf(f, "%llu %llu", &o, &l) != 2) exit(2);
      if (n_all == cap) all = realloc(all, sizeof(Req) * (cap *= 2));
      all[n_all++] = (Req){o, l, NULL};
      b->bytes += l;
      if (o < b->lo) b->lo = o;
      if (o + l > b->hi) b->hi = o + l;
    }
  }
  fclose(f);
  if (fb > file_bytes) { fprintf(stderr, "replay needs %llu bytes\n", fb); exit(2); }
}

// builds the requests of one batch in a layout: 0 runs (one per run, split at chunk), 1 span (lo..hi in chunks),
// 2 contig (bytes from lo in chunks: a compact placement of the batch's blocks)
static size_t build(Batch* b, int layout, uint64_t chunk, Req* out) {
  size_t k = 0;
  if (layout == 0) {
    for (size_t i = 0; i < b->n; i++) {
      Req x = all[b->first + i];
      for (uint64_t d = 0; d < x.len; d += chunk) {
        uint64_t len = x.len - d < chunk ? x.len - d : chunk;
        out[k++] = (Req){x.off + d, len, buf + x.off + d};
      }
    }
  } else {
    uint64_t lo = b->lo, len = layout == 1 ? b->hi - b->lo : b->bytes;
    if (lo + len > file_bytes) lo = file_bytes - len;
    for (uint64_t d = 0; d < len; d += chunk) {
      uint64_t l = len - d < chunk ? len - d : chunk;
      out[k++] = (Req){lo + d, l, buf + lo + d};
    }
  }
  return k;
}

static const char* LNAME[] = {"runs", "span", "contig"};

// one pass over the given steps; per-step read time (sum of its batches) into step_s, returns total bytes read
static uint64_t pass(const int* steps, int ns, int layout, uint64_t chunk, int t, double* step_s, double* batch_s, size_t* nbatch, size_t* nreq) {
  static Req* tmp;
  if (!tmp) tmp = malloc(sizeof(Req) * (1 << 20));
  long gap_us = getenv("GAP_US") ? atol(getenv("GAP_US")) : 0;
  uint64_t bytes = 0;
  *nbatch = 0;
  *nreq = 0;
  for (int si = 0; si < ns; si++) {
    step_s[si] = 0;
    for (size_t i = 0; i < n_batches; i++) {
      if (batches[i].step != steps[si]) continue;
      size_t k = build(&batches[i], layout, chunk, tmp);
      if (gap_us > 0) usleep((useconds_t)gap_us);
      double s = run_batch(tmp, k, t);
      step_s[si] += s;
      if (batch_s) batch_s[*nbatch] = s;
      (*nbatch)++;
      *nreq += k;
      bytes += layout == 1 ? batches[i].hi - batches[i].lo : batches[i].bytes;
    }
  }
  return bytes;
}

static void replay(void) {
  const int steps[] = {1, 10, 20, 30, 40, 50, 63};
  const int ns = sizeof steps / sizeof steps[0];
  double st[64];
  static double bs[1 << 14];
  struct { int layout; uint64_t chunk; int t; } cfg[] = {
      {0, 1 << 20, 4},  {0, 1 << 20, 8},  {0, 1 << 20, 16}, {0, 1 << 20, 32}, {0, 64 << 20, 4}, {0, 64 << 20, 16},
      {0, 256 << 10, 16}, {1, 1 << 20, 8}, {1, 1 << 20, 16}, {1, 4 << 20, 8}, {1, 4 << 20, 16}, {2, 1 << 20, 8},
      {2, 1 << 20, 16}, {2, 4 << 20, 8},  {2, 4 << 20, 16}, {2, 2 << 20, 32},
  };
  int rounds = getenv("ROUNDS") ? atoi(getenv("ROUNDS")) : 2;
  for (int round = 0; round < rounds; round++)
    for (unsigned c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
      size_t nb, nr;
      uint64_t bytes = pass(steps, ns, cfg[c].layout, cfg[c].chunk, cfg[c].t, st, bs, &nb, &nr);
      double tot = 0;
      for (int i = 0; i < ns; i++) tot += st[i];
      printf("{\"kind\":\"replay\",\"round\":%d,\"layout\":\"%s\",\"chunk\":%llu,\"threads\":%d,\"steps\":%d,\"batches\":%zu,\"requests\":%zu,\"bytes\":%llu,\"s\":%.4f,\"GBps\":%.3f,\"step_ms\":[",
             round, LNAME[cfg[c].layout], (unsigned long long)cfg[c].chunk, cfg[c].t, ns, nb, nr, (unsigned long long)bytes, tot, bytes / tot / 1e9);
      for (int i = 0; i < ns; i++) printf("%s%.2f", i ? "," : "", st[i] * 1e3);
      printf("]}\n");
      fflush(stdout);
    }
}

static void timeline(void) {
  int t = getenv("T") ? atoi(getenv("T")) : 16;
  uint64_t chunk = getenv("CHUNK") ? strtoull(getenv("CHUNK"), 0, 10) : 1 << 20;
  int layout = getenv("LAYOUT") && !strcmp(getenv("LAYOUT"), "contig") ? 2 : 0;
  int rounds = getenv("ROUNDS") ? atoi(getenv("ROUNDS")) : 2;
  int per_batch = getenv("BATCHES") && atoi(getenv("BATCHES")) != 0;
  int steps[64], ns = 0;
  for (int s = 0; s < 64; s++) steps[ns++] = s;
  double st[64];
  double* bs = per_batch ? malloc(sizeof(double) * (n_batches + 1)) : NULL;
  for (int round = 0; round < rounds; round++) {
    size_t nb, nr;
    uint64_t bytes = pass(steps, ns, layout, chunk, t, st, bs, &nb, &nr);
    double tot = 0;
    for (int i = 0; i < ns; i++) tot += st[i];
    printf("{\"kind\":\"timeline\",\"round\":%d,\"layout\":\"%s\",\"chunk\":%llu,\"threads\":%d,\"requests\":%zu,\"bytes\":%llu,\"s\":%.3f,\"GBps\":%.3f,\"step_ms\":[",
           round, LNAME[layout], (unsigned long long)chunk, t, nr, (unsigned long long)bytes, tot, bytes / tot / 1e9);
    for (int i = 0; i < ns; i++) printf("%s%.2f", i ? "," : "", st[i] * 1e3);
    printf("]");
    if (bs) {
      // the batches in the order pass() ran them: step by step, each step's batches in file order
      printf(",\"batches\":[");
      size_t j = 0;
      for (int si = 0; si < ns; si++)
        for (size_t i = 0; i < n_batches; i++)
          if (batches[i].step == steps[si]) { printf("%s[%d,%zu,%llu,%.4f]", j ? "," : "", batches[i].step, batches[i].n, (unsigned long long)batches[i].bytes, bs[j] * 1e3); j++; }
      printf("]");
    }
    printf("}\n");
    fflush(stdout);
  }
  free(bs);
}

int main(int argc, char** argv) {
  if (argc < 3) { fprintf(stderr, "usage: nvme-bench DIR matrix|replay|timeline [REPLAY]\n"); return 1; }
  char path[4096];
  snprintf(path, sizeof path, "%s/nvme-bench-%d.bin", argv[1], getpid());
  file_bytes = getenv("FILE_MB") ? strtoull(getenv("FILE_MB"), 0, 10) << 20 : 2048ull << 20;
  if (argc > 3) load_replay(argv[3]);
  fd = open(path, O_RDWR | O_CREAT | O_DIRECT, 0644);
  if (fd < 0) { perror("open O_DIRECT"); return 2; }
  if (posix_fallocate(fd, 0, (off_t)file_bytes) != 0) fprintf(stderr, "fallocate failed\n");
  if (posix_memalign((void**)&buf, 4096, file_bytes + (64 << 20))) return 2;
  memset(buf, 1, file_bytes + (64 << 20));
  for (long i = 0; i < MAXT; i++) pthread_create(&th[i], NULL, worker, (void*)i);
  fill_file();
  if (!strcmp(argv[2], "matrix")) matrix();
  else if (!strcmp(argv[2], "replay")) replay();
  else if (!strcmp(argv[2], "timeline")) timeline();
  pthread_mutex_lock(&mu);
  quit = 1;
  pthread_cond_broadcast(&cv_go);
  pthread_mutex_unlock(&mu);
  for (int i = 0; i < MAXT; i++) pthread_join(th[i], NULL);
  close(fd);
  unlink(path);
  return 0;
}
