/**
 * Does SmartKV gain from allocating bits per token rather than per 16-token block? One generated
 * trace with block_size 1 (a block is a token, so SmartKV's per-block allocation is per token) and
 * the same attention summed into 16-token blocks (block_size 16, key norms the blocks' largest);
 * SmartKV replays both at the same average bits with the whole cache in HBM (no offload), and the
 * table gives the attention-weighted quantization error (summary quant_error.mean: per step and
 * layer, Σ blocks mass x relative error of the block's width) of each. The 16-token run's error is
 * what per-token evaluation of a per-block allocation gives: a block's mass is its tokens' sum.
 *
 *   npx tsx perf/smartkv-per-token.ts [--prompt 2048] [--steps 64] [--groups 1]
 *       [--preset default] [--seed 1] [--avg 2.5,3,3.5,4] [--importance sum|max] [--dir DIR] [--json PATH]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { simulate } from '../sim/run.js';
import type { LayerAttention, TraceHeader } from '../traces/format.js';
import { generateTrace } from '../traces/generator.js';
import { PRESET_NAMES, type PresetName } from '../traces/generator-params.js';
import { openTrace } from '../traces/trace-reader.js';
import { TraceWriter } from '../traces/trace-writer.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const prompt = Number(arg('prompt', '2048'));
const steps = Number(arg('steps', '64'));
const layers = 32; // llama-3-8b's layer count (the simulator checks the trace against the model)
const groups = Number(arg('groups', '1'));
const preset = arg('preset', 'default');
const seed = arg('seed', '1');
const avgs = arg('avg', '2.5,3,3.5,4').split(',').map(Number);
const importance = arg('importance', 'sum');
const dir = arg('dir', fs.mkdtempSync(path.join(os.tmpdir(), 'kvtier-smartkv-per-token-')));
const B = 16;
fs.mkdirSync(dir, { recursive: true });

const perToken = path.join(dir, `per-token-${preset}-g${groups}-p${prompt}-s${steps}-${seed}.kvt`);
const perBlock = path.join(dir, `per-block-${preset}-g${groups}-p${prompt}-s${steps}-${seed}.kvt`);
if (!(PRESET_NAMES as string[]).includes(preset)) throw new Error(`--preset: unknown preset "${preset}" (presets: ${PRESET_NAMES.join(', ')})`);
if (!fs.existsSync(perToken)) {
  generateTrace(perToken, { preset: preset as PresetName, model: 'llama-3-8b', layers, kv_groups: groups, prompt_tokens: prompt, steps, block_size: 1, encoding: 'dense', seed: Number(seed) });
}

/** the same attention in 16-token blocks: masses summed, key norms the largest of the block's tokens */
function aggregate(src: string, dst: string): void {
  const r = openTrace(src);
  const h: TraceHeader = { ...r.header, block_size: B, provenance: { ...r.header.provenance, aggregated_from: path.basename(src), aggregated_block_size: B } };
  if (fs.existsSync(dst)) fs.unlinkSync(dst);
  const w = new TraceWriter(dst, h);
  const norms: Float32Array[] = [];
  for (let step = r.readStep(); step; step = r.readStep()) {
    const rows: LayerAttention[] = step.layers.map((row, i) => {
      const n = row.nBlocks;
      if (!norms[i] || norms[i]!.length < n) {
        const t = new Float32Array(Math.max(n, 2 * (norms[i]?.length ?? 0)));
        if (norms[i]) t.set(norms[i]!);
        norms[i] = t;
      }
      norms[i]!.set(row.norms, row.normFrom);
      const nb = Math.ceil(n / B);
      const mass = new Float32Array(nb);
      const bn = new Float32Array(nb);
      for (let t = 0; t < n; t++) {
        mass[Math.floor(t / B)] += row.mass[t]!;
        bn[Math.floor(t / B)] = Math.max(bn[Math.floor(t / B)]!, norms[i]![t]!);
      }
      for (let j = 0; j < nb; j++) mass[j] = Math.min(1, mass[j]!);
      return { nBlocks: nb, idx: null, mass, remainder: 0, normFrom: 0, norms: bn };
    });
    w.writeStep({ step: step.step, contextTokens: step.contextTokens, layers: rows });
  }
  w.close();
  r.close();
}
if (!fs.existsSync(perBlock)) aggregate(perToken, perBlock);

const run = (trace: string, avg: number) =>
  simulate({ trace, policy: 'smartkv', policy_options: { avg_bits: String(avg), group_importance: importance }, model: 'llama-3-8b', hardware: 'h100-pcie5', hbm_budget: '100%', trace_steps: 0 }).summary;

console.log(`trace: preset ${preset}, llama-3-8b, ${layers} layers, ${groups} KV group(s), prompt ${prompt}, ${steps} steps, seed ${seed} (${dir}); group_importance ${importance}`);
console.log('avg bits | quant_error_mean per token | per 16-token block | per-token / per-block');
const rows: { avg: number; perToken: number; perBlock: number }[] = [];
for (const avg of avgs) {
  const a = run(perToken, avg).quant_error?.mean ?? NaN;
  const b = run(perBlock, avg).quant_error?.mean ?? NaN;
  rows.push({ avg, perToken: a, perBlock: b });
  console.log(`${avg.toFixed(2).padStart(8)} | ${a.toFixed(5).padStart(26)} | ${b.toFixed(5).padStart(18)} | ${(a / b).toFixed(3)}`);
}
if (process.argv.includes('--json')) fs.writeFileSync(arg('json', 'smartkv-per-token.json'), `${JSON.stringify({ prompt, steps, layers, groups, preset, seed, importance, rows }, null, 2)}\n`);
