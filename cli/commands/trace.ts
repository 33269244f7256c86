import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { generateTrace } from '../../traces/generator.js';
import { PRESET_NAMES } from '../../traces/generator-params.js';
import { computeTraceStats, formatTraceStats } from '../../traces/trace-stats.js';
import { validateTrace } from '../../traces/validate-trace.js';
import { getModel } from '../../sim/models/load-model.js';
import { collectPair, intFlag } from '../parse-pairs.js';

/** "0.5" -> 0.5, "true" -> true, "a,b" stays a string; needle.* keys nest. */
function typedSettings(pairs: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, raw] of Object.entries(pairs)) {
    let v: unknown = raw;
    if (raw === 'true' || raw === 'false') v = raw === 'true';
    else if (raw === 'null') v = null;
    else if (raw.trim() !== '' && Number.isFinite(Number(raw))) v = Number(raw);
    else if (/^\[.*\]$/.test(raw)) v = JSON.parse(raw);
    if (k.startsWith('needle.')) {
      const n = (out.needle ??= {}) as Record<string, unknown>;
      n[k.slice(7)] = v;
    } else out[k] = v;
  }
  return out;
}

export function registerTrace(program: Command): void {
  const trace = program.command('trace').description('attention traces: generate, inspect, validate');
  trace
    .command('gen')
    .alias('generate')
    .description('generate a seeded synthetic attention trace')
    .requiredOption('--out <file>', 'trace file to write (.kvt)')
    .option('--preset <name>', `generator preset (${PRESET_NAMES.join(', ')})`, 'default')
    .option('--model <name>', 'model preset (sets the layer count)', 'llama-3-8b')
    .option('--prompt-tokens <n>', 'prompt length in tokens', intFlag('--prompt-tokens', 1), 4096)
    .option('--steps <n>', 'decode steps', intFlag('--steps', 1), 256)
    .option('--block-size <n>', 'tokens per KV block', intFlag('--block-size', 1), 16)
    .option('--seed <seed>', 'seed (same seed and settings => identical file)', '1')
    .option('--encoding <e>', 'dense, topk or auto', 'auto')
    .option('--topk <n>', 'blocks listed per step and layer with topk', intFlag('--topk', 1), 128)
    .option('--set <key=value>', 'any generator parameter, e.g. zipf_alpha=1.2 or needle.depth=0.3 (repeatable)', collectPair, {})
    .option('--force', 'overwrite an existing file')
    .action((o) => {
      if (!(PRESET_NAMES as string[]).includes(o.preset)) throw new Error(`--preset: unknown preset "${o.preset}" (valid: ${PRESET_NAMES.join(', ')})`);
      const model = getModel(o.model);
      const seed = /^\d+$/.test(o.seed) ? Number(o.seed) : o.seed;
      if (existsSync(o.out) && !o.force) throw new Error(`${o.out} already exists; pass --force to replace it`);
      const t0 = performance.now();
      const { header, bytes } = generateTrace(
        o.out,
        {
          preset: o.preset,
          model: model.name,
          layers: model.layers,
          prompt_tokens: o.promptTokens,
          steps: o.steps,
          block_size: o.blockSize,
          seed,
          encoding: o.encoding,
          topk: o.topk,
          ...typedSettings(o.set),
        } as never,
        { overwrite: Boolean(o.force) },
      );
      console.log(
        `wrote ${o.out}: ${header.model}, ${header.layers} layers, prompt ${header.prompt_tokens}, ${header.steps} steps, ` +
          `${header.encoding}${header.topk ? ` k=${header.topk}` : ''}, ${(bytes / 1e6).toFixed(2)} MB in ${((performance.now() - t0) / 1000).toFixed(2)} s`,
      );
    });
  trace
    .command('stats')
    .description('sink share, blocks to cover 50/90/99% of mass, sparsity, persistence, entropy, recency per layer')
    .argument('<file>', 'trace file')
    .option('--json', 'machine-readable')
    .action((file, o) => {
      const stats = computeTraceStats(file);
      console.log(o.json ? JSON.stringify(stats, null, 2) : formatTraceStats(stats));
    });
  trace
    .command('validate')
    .description('read a whole trace and check every record (checksums, sizes, masses)')
    .argument('<file>', 'trace file')
    .action((file) => {
      const v = validateTrace(file);
      console.log(`${file}: valid (${JSON.stringify(v)})`);
    });
}
