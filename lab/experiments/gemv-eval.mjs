#!/usr/bin/env node
/**
 * Copy pricing variants on stored hardware steps (no GPU). A variant rewrites a calibrated profile:
 * - start: the profile as calibrated (copies priced when they start);
 * - gemv: the same with gpu.copy_under_compute "gemv" (a copy batch runs at alpha_us and pays
 *   alpha_under_compute_us - alpha_us for each copy of its time beside GEMVs);
 * - gemv-batch: "gemv", and the hbm<->dram link refitted from the calibration's layout batches
 *   (PROFILE.fit.json) with a fixed cost per batch group (gpu.copy_batch_us), as the calibration now
 *   writes it: hil/calibrate/fit-copy-batches.ts (fitLayoutCopyBatches, applyCopyBatchFit). For a
 *   profile calibrated with that fit, gemv-batch gives its own numbers back, and start / gemv are not
 *   the older calibration's variants (its alphas already left the per-group cost out);
 * - former: the copy model the calibration wrote before the per-batch fit, from the same
 *   PROFILE.fit.json: the per-direction layout fits (each group's fixed cost in alpha_us), copies priced
 *   at their start (hil/calibrate/calibrate.ts applyPerDirectionLayoutFits).
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

/** the product's per-batch copy fit (dist/, built by `npx tsc -p tsconfig.json`) */
const copyBatches = () => import(path.resolve('dist/hil/calibrate/fit-copy-batches.js'));

/** the profile rewritten for a variant (a deep copy) */
export async function variantProfile(profile, fitJson, variant) {
  const p = structuredClone(profile);
  if (variant === 'start') return p;
  if (variant === 'former') {
    if (!fitJson) throw new Error('former needs the calibration side file (PROFILE.fit.json)');
    const { hbmLink } = await copyBatches();
    const { applyPerDirectionLayoutFits } = await import(path.resolve('dist/hil/calibrate/calibrate.js'));
    applyPerDirectionLayoutFits(p, hbmLink(p).index, fitJson.fits, 'rewritten by lab/experiments/gemv-eval.mjs from the calibration\'s per-direction layout fits', fitJson.measurements.layout_info);
    return p;
  }
  if (variant !== 'gemv' && variant !== 'gemv-batch') throw new Error(`variant must be start, gemv, gemv-batch or former (got "${variant}")`);
  p.gpu.copy_under_compute = 'gemv';
  if (variant === 'gemv-batch') {
    if (!fitJson) throw new Error('gemv-batch needs the calibration side file (PROFILE.fit.json)');
    const { fitLayoutCopyBatches, applyCopyBatchFit } = await copyBatches();
    applyCopyBatchFit(p, fitLayoutCopyBatches(fitJson.measurements), 'refitted by lab/experiments/gemv-eval.mjs from the calibration\'s layout batches');
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
    const fit = fitOf(args[0]);
    if (!fit) throw new Error(`no calibration side file next to ${args[0]} (${args[0].replace(/\.json$/, '.fit.json')})`);
    const { fitLayoutCopyBatches } = await copyBatches();
    const { idle, under_compute: busy } = fitLayoutCopyBatches(fit.measurements);
    const show = (n, f) =>
      console.log(
        `${n}: h2d ${f.h2d.alpha_us.toFixed(3)} us + ${f.h2d.GBps.toFixed(2)} GB/s, d2h ${f.d2h.alpha_us.toFixed(3)} us + ${f.d2h.GBps.toFixed(2)} GB/s, per group ${f.group_us.toFixed(2)} us, per change ${f.switch_us?.toFixed(2) ?? '-'} us, max |rel residual| ${(100 * f.max_abs_residual).toFixed(1)}%`,
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
        fs.writeFileSync(path.join(dst, 'profiles', f), JSON.stringify(await variantProfile(readJson(from), fitOf(from), variant), null, 2) + '\n');
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
    const profiles = [];
    for (const v of variants) {
      const f = path.join(tmp, `profile-${v}.json`);
      fs.writeFileSync(f, JSON.stringify(await variantProfile(profile, fit, v)));
      profiles.push(f);
    }
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
