#!/usr/bin/env node
// Runs on the GPU machine, which has no npm packages: the kernel checks (cuda and host
// backends against the float64 references) and then the benchmarks, from compiled JS.
//   node perf/hil-device-check.mjs --dist .device/dist --out DIR [--quick] [--only attention] [--attn KEY=VALUE ...]
// --attn: an attention option (kvtier hil options), repeatable; the checks and the benchmarks both
// run with them, e.g. --attn tensor_cores=off (every table on v3).
// The addon is found through KVTIER_HIL_ADDON or hil/build/Release.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { deviceArgs } from './device-args.mjs';

const { args, opt, dist, out, load } = deviceArgs('runs/hil-device');

const { openBackend, cudaStatus } = await load('hil/backend.js');
const { attnFlag, resolveAttentionOptions } = await load('hil/attention-options.js');
const { runAllKernelChecks } = await load('hil/checks/kernel-checks.js');

let failed = 0;
const status = cudaStatus();
console.log(`cuda backend: ${status.available ? 'available' : 'unavailable'} (${status.reason})`);
let attn = {};
const attnArgs = [];
args.forEach((a, i) => {
  if (a === '--attn') {
    attn = attnFlag(args[i + 1] ?? '', attn);
    attnArgs.push('--attn', args[i + 1]);
  }
});
console.log(`attention options: ${Object.entries(resolveAttentionOptions(attn)).map(([k, v]) => `${k}=${v}`).join(' ')}`);
for (const kind of ['cuda', 'host']) {
  if (kind === 'cuda' && !status.available) {
    console.log(`SKIP cuda checks: ${status.reason}`);
    continue;
  }
  const b = openBackend(kind, 0, attn);
  const results = await runAllKernelChecks(b);
  for (const r of results) console.log(`${r.ok ? 'PASS' : 'FAIL'} [${kind}] ${r.name}: ${r.detail}${r.ms !== undefined ? ` (${(r.ms * 1000).toFixed(1)} us)` : ''}`);
  failed += results.filter((r) => !r.ok).length;
  console.log(`[${kind}] ${results.length - results.filter((r) => !r.ok).length}/${results.length} checks passed`);
  b.close();
}

const benchArgs = [resolve(dist, 'perf/hil-bench.js'), '--backend', status.available ? 'cuda' : 'host', '--out', out, '--only', opt('only', 'copies,attention,overlap,prefetch,gemv,file,quality')];
if (args.includes('--quick')) benchArgs.push('--quick');
benchArgs.push(...attnArgs);
const r = spawnSync(process.execPath, benchArgs, { stdio: 'inherit' });
process.exit(failed > 0 ? 1 : (r.status ?? 1));
