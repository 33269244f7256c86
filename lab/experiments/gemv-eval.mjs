#!/usr/bin/env node
/**
 * Copy pricing variants on stored hardware steps (no GPU). A variant rewrites a calibrated profile:
 * - start: the profile as calibrated (copies priced when they start);
 * - gemv: the same with gpu.copy_under_compute "gemv" (a copy batch runs at alpha_us and pays
 *   alpha_under_compute_us - alpha_us for each copy of its time beside GEMVs);
 * - gemv-batch: "gemv", and the hbm<->dram link refitted from the calibration's layout batches
 *   (PROFILE.fit.json) with a fixed cost per batch group (gpu.copy_batch_us): per condition,
 *   time = h2d copies x a_h2d + h2d bytes / beta_h2d + the same for d2h + groups x c + changes x s,
 *   relative-error least squares over the single-direction batches (8 groups each) and the mixed ones
 *   (16 groups, 15 changes); under compute with c fixed at the idle fit's. alpha_us, GBps, switch_us
 *   from the idle fit, alpha_under_compute_us, switch_under_compute_us from the under-compute one.
 *
 *   node lab/experiments/gemv-eval.mjs fit PROFILE.json              the refit, printed
 *   node lab/experiments/gemv-eval.mjs rundir SRC DST VARIANT        a copy of validate dir SRC (validate.json,
 *                                                                    profiles/) with its profiles rewritten, for
 *                                                                    `kvtier hil validate-resim DST --out ...`
 *   node lab/experiments/gemv-eval.mjs pools NAME=OUTDIR...          per-step |sim - hw| / hw (median of the runs, first
 *                                                                    skip_steps left out) of resimulated validate runs,
 *                                                                    pooled: moving cells (storage cells, pool "storage",
 *                                                                    left out), the same without captured traces,
 *                                                                    non-moving; and per policy and pool
 *   node lab/experiments/gemv-eval.mjs diag DIR VARIANT [VARIANT...] the diag-compare cells of DIR (an unpacked
 *                                                                    timelines tgz: profile.json, c-NAME/hil-POLICY/)
 *                                                                    simulated again with each variant's profile and
 *                                                                    compared per step with hil-steps.csv
 * Run from the repository root after `npx tsc -p tsconfig.json` (it imports dist/).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const LAYERS_PER_BATCH = 8;

/** least squares of rows (arrays) against y, each row weighted by w: solves the normal equations */
function lsq(rows, y, w) {
  const n = rows[0].length;
  const A = Array.from({ length: n }, () => new Float64Array(n));
  const b = new Float64Array(n);
  rows.forEach((r, k) => {
    const wk = w[k] * w[k];
    for (let i = 0; i < n; i++) {
      b[i] += wk * r[i] * y[k];
      for (let j = 0; j < n; j++) A[i][j] += wk * r[i] * r[j];
    }
  });
  // Gauss-Jordan with partial pivoting
  const x = Array.from(b);
  const M = A.map((r) => Array.from(r));
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(M[r][c]) > Math.abs(M[p][c])) p = r;
    [M[c], M[p]] = [M[p], M[c]];
    [x[c], x[p]] = [x[p], x[c]];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = M[r][c] / M[c][c];
      for (let j = c; j < n; j++) M[r][j] -= f * M[c][j];
      x[r] -= f * x[c];
    }
  }
  return x.map((v, i) => v / M[i][i]);
}

/** per condition: { a_h2d, us_per_byte_h2d, a_d2h, us_per_byte_d2h, group_us, switch_us, max_rel } */
export function refit(fitJson) {
  const m = fitJson.measurements;
  const rowsOf = (sfx) => {
    const pts = [...m[`h2d_layout${sfx}`], ...m[`d2h_layout${sfx}`], ...(m[`mixed_layout${sfx}`] ?? [])];
    return pts.map((p) => ({
      x: [p.split.h2d.runs, p.split.h2d.bytes, p.split.d2h.runs, p.split.d2h.bytes, p.direction === 'mixed' ? 2 * LAYERS_PER_BATCH : LAYERS_PER_BATCH, p.switches],
      us: p.us,
    }));
  };
  const fitCond = (sfx, groupUs) => {
    const pts = rowsOf(sfx);
    const fixed = groupUs !== undefined;
    const rows = pts.map((p) => (fixed ? [p.x[0], p.x[1], p.x[2], p.x[3], p.x[5]] : p.x));
    const y = pts.map((p) => p.us - (fixed ? groupUs * p.x[4] : 0));
    const w = pts.map((p) => 1 / p.us);
    const s = lsq(rows, y, w);
    const v = fixed ? [s[0], s[1], s[2], s[3], groupUs, s[4]] : s;
    const max_rel = Math.max(...pts.map((p) => Math.abs(p.x.reduce((a, xi, i) => a + xi * v[i], 0) - p.us) / p.us));
    return { a_h2d: v[0], us_per_byte_h2d: v[1], a_d2h: v[2], us_per_byte_d2h: v[3], group_us: v[4], switch_us: v[5], max_rel };
  };
  const idle = fitCond('_idle');
  const busy = fitCond('', idle.group_us);
  return { idle, busy };
}

const r2 = (x) => Math.round(x * 100) / 100;

/** the profile rewritten for a variant (a deep copy) */
export function variantProfile(profile, fitJson, variant) {
  const p = structuredClone(profile);
  if (variant === 'start') return p;
  if (variant !== 'gemv' && variant !== 'gemv-batch') throw new Error(`variant must be start, gemv or gemv-batch (got "${variant}")`);
  p.gpu.copy_under_compute = 'gemv';
  if (variant === 'gemv-batch') {
    if (!fitJson) throw new Error('gemv-batch needs the calibration side file (PROFILE.fit.json)');
    const { idle, busy } = refit(fitJson);
    const hbm = p.tiers[0].name;
    const L = p.links.find((l) => l.a === hbm || l.b === hbm);
    const [toHost, toHbm] = L.a === hbm ? ['a_to_b', 'b_to_a'] : ['b_to_a', 'a_to_b'];
    for (const [d, k] of [[toHost, 'd2h'], [toHbm, 'h2d']]) {
      L[d] = {
        ...L[d],
        alpha_us: r2(idle[`a_${k}`]),
        GBps: r2(1 / idle[`us_per_byte_${k}`] / 1000),
        alpha_under_compute_us: r2(busy[`a_${k}`]),
        switch_us: r2(Math.max(0, idle.switch_us)),
        switch_under_compute_us: r2(Math.max(0, busy.switch_us)),
      };
    }
    p.gpu.copy_batch_us = r2(Math.max(0, idle.group_us));
  }
  return p;
}

function readJson(f) {
  return JSON.parse(fs.readFileSync(f, 'utf8'));
}

function fitOf(profilePath) {
  const f = profilePath.replace(/\.json$/, '.fit.json');
  return fs.existsSync(f) ? readJson(f) : null;
}

async function main() {
  const [cmd, ...args] = process.argv.slice(2);
  if (cmd === 'fit') {
    const { idle, busy } = refit(fitOf(args[0]));
    const show = (n, f) =>
      console.log(
        `${n}: h2d ${f.a_h2d.toFixed(3)} us + ${(1 / f.us_per_byte_h2d / 1000).toFixed(2)} GB/s, d2h ${f.a_d2h.toFixed(3)} us + ${(1 / f.us_per_byte_d2h / 1000).toFixed(2)} GB/s, per group ${f.group_us.toFixed(2)} us, per change ${f.switch_us.toFixed(2)} us, max |rel residual| ${(100 * f.max_rel).toFixed(1)}%`,
      );
    show('idle', idle);
    show('under compute', busy);
    return;
  }
  if (cmd === 'rundir') {
    const [src, dst, variant] = args;
    fs.rmSync(dst, { recursive: true, force: true });
    fs.mkdirSync(path.join(dst, 'profiles'), { recursive: true });
    for (const f of ['validate.json', 'grid.json', 'plan.json']) if (fs.existsSync(path.join(src, f))) fs.copyFileSync(path.join(src, f), path.join(dst, f));
    for (const f of fs.readdirSync(path.join(src, 'profiles'))) {
      const from = path.join(src, 'profiles', f);
      if (f.endsWith('.json') && !f.endsWith('.fit.json')) {
        fs.writeFileSync(path.join(dst, 'profiles', f), JSON.stringify(variantProfile(readJson(from), fitOf(from), variant), null, 2) + '\n');
      } else fs.copyFileSync(from, path.join(dst, 'profiles', f));
    }
    // captured traces and other inputs the cells name by relative path stay where they are
    for (const f of fs.readdirSync(src)) {
      const to = path.join(dst, f);
      if (!fs.existsSync(to)) fs.symlinkSync(path.resolve(src, f), to);
    }
    return;
  }
  if (cmd === 'pools') {
    const { quantile } = await import(path.resolve('dist/hil/compare/errors.js'));
    const pct = (xs) => (xs.length ? `${(100 * quantile(xs, 0.5)).toFixed(2)} / ${(100 * quantile(xs, 0.95)).toFixed(2)}%` : '-');
    const runs = args.map((a) => {
      const [name, dir] = a.split('=');
      return { name, v: readJson(path.join(dir, 'validate.json')) };
    });
    const errs = (v, keep) => {
      const out = [];
      for (const c of v.cells) {
        if (c.status !== 'ok' || !keep(c)) continue;
        for (let i = v.skip_steps; i < c.sim_ms.length; i++) out.push(Math.abs(c.sim_ms[i] - c.hw_median_ms[i]) / c.hw_median_ms[i]);
      }
      return out;
    };
    const rows = [
      ['moving (no storage)', (c) => c.pool === 'moving'],
      ['moving, generated traces', (c) => c.pool === 'moving' && c.trace_kind !== 'captured'],
      ['storage', (c) => c.pool === 'storage'],
      ['non-moving', (c) => c.pool === 'non-moving'],
    ];
    const keys = [];
    for (const { v } of runs) for (const c of v.cells) if (c.status === 'ok' && !keys.includes(`${c.policy} [${c.pool}]`)) keys.push(`${c.policy} [${c.pool}]`);
    for (const k of keys) rows.push([k, (c) => `${c.policy} [${c.pool}]` === k]);
    console.log(['pool (median / p95)', ...runs.map((r) => r.name)].join(' | '));
    for (const [label, keep] of rows) {
      const n = runs[0].v.cells.filter((c) => c.status === 'ok' && keep(c)).length;
      console.log([`${label} (${n} cells)`, ...runs.map((r) => pct(errs(r.v, keep)))].join(' | '));
    }
    return;
  }
  if (cmd === 'diag') {
    const [dir, ...variants] = args;
    const { generateTrace } = await import(path.resolve('dist/traces/generator.js'));
    const { simulate } = await import(path.resolve('dist/sim/run.js'));
    const { quantile } = await import(path.resolve('dist/hil/compare/errors.js'));
    const tmp = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'gemv-eval-'));
    const profile = readJson(path.join(dir, 'profile.json'));
    const fit = fitOf(path.join(dir, 'profile.json'));
    const profiles = variants.map((v) => {
      const f = path.join(tmp, `profile-${v}.json`);
      fs.writeFileSync(f, JSON.stringify(variantProfile(profile, fit, v)));
      return f;
    });
    const pct = (xs) => `${(100 * quantile(xs, 0.5)).toFixed(2)} / ${(100 * quantile(xs, 0.95)).toFixed(2)}%`;
    const pooled = variants.map(() => ({ all: [], moving: [] }));
    console.log(['cell (median / p95 per-step |sim - hw| / hw; mean step sim / hw ms)', ...variants].join(' | '));
    for (const c of fs.readdirSync(dir).filter((x) => x.startsWith('c-')).sort()) {
      // c-PROMPT-PRESET-SEED-BUDGETpct, as perf/device/diag-compare.mjs names them
      const [, prompt, preset, seed, budget] = c.match(/^c-(\d+)-(\w+)-(\d+)-(\d+)pct$/);
      const cmp = readJson(path.join(dir, c, 'compare.json'));
      const steps = cmp.policies[0].steps.length;
      const trace = path.join(tmp, `t-${prompt}-${preset}-${seed}-${steps}.kvt`);
      if (!fs.existsSync(trace)) generateTrace(trace, { model: 'llama-3-8b', layers: 32, prompt_tokens: Number(prompt), steps, seed: Number(seed), ...(preset !== 'default' ? { preset } : {}) });
      for (const p of cmp.policies) {
        // the hardware's steps: hil-steps.csv of each run (the per-step median over runs, as compare takes it)
        const runDirs = fs.readdirSync(path.join(dir, c)).filter((x) => x === `hil-${p.label}` || x.startsWith(`hil-${p.label}-r`));
        const runs = runDirs.map((r) => {
          const [head, ...lines] = fs.readFileSync(path.join(dir, c, r, 'hil-steps.csv'), 'utf8').trim().split('\n');
          const k = head.split(',').indexOf('latency_us');
          return lines.map((l) => Number(l.split(',')[k]) / 1000);
        });
        const hw = runs[0].map((_, i) => quantile(runs.map((r) => r[i]), 0.5));
        const cells = profiles.map((prof, vi) => {
          const sim = simulate({ trace, policy: p.policy, policy_options: p.options, hardware: prof, hbm_budget: cmp.hbm_budget });
          const ms = sim.steps.map((s) => s.latency_ms);
          const errs = ms.slice(cmp.skip_steps).map((x, i) => Math.abs(x - hw[i + cmp.skip_steps]) / hw[i + cmp.skip_steps]);
          pooled[vi].all.push(...errs);
          if (Object.values(sim.summary.bytes).some((b) => b > 0)) pooled[vi].moving.push(...errs);
          const mean = (xs) => xs.slice(cmp.skip_steps).reduce((a, b) => a + b, 0) / (xs.length - cmp.skip_steps);
          return `${pct(errs)} (${mean(ms).toFixed(3)} / ${mean(hw).toFixed(3)})`;
        });
        console.log([`${p.label} ${cmp.hbm_budget}`, ...cells].join(' | '));
      }
    }
    console.log(['pooled, moving cells', ...pooled.map((x) => pct(x.moving))].join(' | '));
    fs.rmSync(tmp, { recursive: true, force: true });
    return;
  }
  console.error('usage: gemv-eval.mjs fit PROFILE.json | rundir SRC DST VARIANT | diag DIR VARIANT...');
  process.exit(2);
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('gemv-eval.mjs')) await main();
