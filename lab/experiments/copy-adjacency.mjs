/**
 * Host-slot distances between consecutive single copies of the lowered HIL plan, per memory-stream
 * span (a layer's fetch, stage, demotion or promotion between two marks), by direction: how many
 * copies go to or from the host slot next to the previous copy's (distance 1: adjacent slots the
 * executor copies separately, as quantized blocks in FP16-sized slots, or FP16 blocks whose HBM
 * slots are not contiguous), 2-4 slots (the calibration's layout batches), or further.
 *   node lab/experiments/copy-adjacency.mjs CONFIG.json PROFILE.json [TRACE.kvt]   (after npx tsc: uses dist/)
 * CONFIG: a diag cell's config.json (perf/device/diag-compare.mjs); PROFILE the profile it ran with, TRACE its trace.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { recordAndLower } = await import(path.join(root, 'dist/hil/executor/hil-run.js'));
const [cfgPath, profile, trace] = process.argv.slice(2);
// a diag cell's config.json is the resolved run: its policy, options and budget are what is kept
const cell = JSON.parse(fs.readFileSync(cfgPath, 'utf8'));
const cfg = { trace: trace || cell.trace, policy: cell.policy, policy_options: cell.policy_options, hardware: profile, hbm_budget: cell.hbm_budget, group_size: cell.group_size ?? 128 };
const { lowered } = recordAndLower(cfg, { backend: 'cuda' });
const slot = lowered.slotBytes;
const hist = { h2d: {}, d2h: {} };
let copies = { h2d: 0, d2h: 0 };
for (const s of lowered.steps.slice(1)) {
  let prev = { h2d: -1, d2h: -1 };
  for (const op of s.ops) {
    if (op.o === 'mark') {
      prev = { h2d: -1, d2h: -1 };
      continue;
    }
    if (op.o !== 'copy') continue;
    const dir = op.src === 'dram' && op.dst === 'arena' ? 'h2d' : op.src === 'arena' && op.dst === 'dram' ? 'd2h' : null;
    if (!dir) continue;
    const hostOff = dir === 'h2d' ? op.srcOff : op.dstOff;
    const at = Math.floor(hostOff / slot);
    const last = at + Math.ceil(op.bytes / slot) - 1;
    copies[dir]++;
    let key = 'first';
    if (prev[dir] >= 0) {
      const d = Math.abs(at - prev[dir]);
      key = d === 1 ? '1' : d <= 4 ? '2-4' : d <= 32 ? '5-32' : '>32';
    }
    const kb = op.bytes < slot ? `single ${op.bytes} B` : op.bytes === slot ? 'single FP16' : 'run';
    hist[dir][kb] ??= {};
    hist[dir][kb][key] = (hist[dir][kb][key] ?? 0) + 1;
    prev[dir] = last;
  }
}
console.log(`${cfg.policy?.name ?? cfg.policy} budget ${cfg.hbm_budget ?? cfg.budget ?? ''}: copies after step 0 ${JSON.stringify(copies)}`);
for (const dir of ['h2d', 'd2h']) for (const [k, v] of Object.entries(hist[dir])) console.log(`  ${dir} ${k.padEnd(18)} ${JSON.stringify(v)}`);
