// A small GQA model (head_dim 64, the smallest the attention kernel takes) and a generated trace
// for the HIL executor tests, written to a temporary directory.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateTrace } from '../../traces/generator.js';

export interface HilFixture {
  dir: string;
  model: string;
  trace: string;
}

export function makeHilFixture(prompt = 512, steps = 24, blockSize?: number): HilFixture {
  const dir = mkdtempSync(join(tmpdir(), 'kvtier-hil-test-'));
  const model = join(dir, 'hil-mini.json');
  writeFileSync(
    model,
    JSON.stringify({
      name: 'hil-mini',
      description: 'HIL test model: 2 layers, 4 query / 2 KV heads of dim 64',
      layers: 2,
      hidden: 256,
      q_heads: 4,
      kv_heads: 2,
      head_dim: 64,
      attention: 'gqa',
      weight_bytes_per_layer: 256 * 1024 * 2,
      flops_per_token_per_layer: 256 * 1024 * 2,
      other_weight_bytes: 256 * 512 * 2,
      sources: { all: 'test fixture' },
    }),
  );
  const trace = join(dir, 'mini.kvt');
  generateTrace(trace, { model: 'hil-mini', layers: 2, prompt_tokens: prompt, steps, seed: 3, ...(blockSize !== undefined ? { block_size: blockSize } : {}) } as never);
  return { dir, model, trace };
}
