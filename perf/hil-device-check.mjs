#!/usr/bin/env node
// Runs on the GPU machine, which has no npm packages: the kernel checks (cuda and host
// backends against the float64 references) and then the benchmarks, from compiled JS.
//   node perf/hil-device-check.mjs --dist .device/dist --out DIR [--quick] [--only attention]
// Attention kernel variants: set their env knobs for the whole run, e.g.
//   KVTIER_HIL_ATTN_PACK=1 node perf/hil-device-check.mjs ... (checks and benchmarks both use it).
// The addon is found through KVTIER_HIL_ADDON or hil/build/Release.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { deviceArgs } from './device-args.mjs';

const { args, opt, dist, out, load } = deviceArgs('runs/hil-device');

const { openBackend, cudaStatus } = await load('hil/backend.js');
const { runAllKernelChecks } = await load('hil/checks/kernel-checks.js');

let failed = 0;
const status = cudaStatus();
console.log(`cuda backend: ${status.available ? 'available' : 'unavailable'} (${status.reason})`);
// attention variants are chosen by env knobs the addon reads once (KVTIER_HIL_ATTN_PACK=1, ...)
const knobs = Object.entries(process.env).filter(([k]) => k.startsWith('KVTIER_HIL_ATTN_'));
console.log(`attention knobs: ${knobs.map(([k, v]) => `${k}=${v}`).join(' ') || 'none (defaults)'}`);
for (const kind of ['cuda', 'host']) {
  if (kind === 'cuda' && !status.available) {
    console.log(`SKIP cuda checks: ${status.reason}`);
    continue;
  }
  const b = openBackend(kind);
  const results = await runAllKernelChecks(b);
  for (const r of results) console.log(`${r.ok ? 'PASS' : 'FAIL'} [${kind}] ${r.name}: ${r.detail}${r.ms !== undefined ? ` (${(r.ms * 1000).toFixed(1)} us)` : ''}`);
  failed += results.filter((r) => !r.ok).length;
  console.log(`[${kind}] ${results.length - results.filter((r) => !r.ok).length}/${results.length} checks passed`);
  b.close();
}

const benchArgs = [resolve(dist, 'perf/hil-bench.js'), '--backend', status.available ? 'cuda' : 'host', '--out', out, '--only', opt('only', 'copies,attention,overlap,prefetch,gemv,file,quality')];
if (args.includes('--quick')) benchArgs.push('--quick');
const r = spawnSync(process.execPath, benchArgs, { stdio: 'inherit' });
process.exit(failed > 0 ? 1 : (r.status ?? 1));
