// `kvtier hil run --verify`: a run whose blocks differ from what was written ends with exit status 1
// and says so; a clean verification ends with 0. The run itself is replaced by a canned result, so the
// test is about the command's exit path only (test/hil/every-policy.test.ts runs the real thing).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

const verify = vi.hoisted(() => ({ value: { checked: 10, mismatches: 0 } as { checked: number; mismatches: number; firstMismatch?: string } }));

vi.mock('../../hil/executor/hil-run.js', () => ({
  hilRun: async () => ({
    result: { summary: { policy: 'full', hardware: 'test (hil host)', model: 'tiny', hbm_budget_fraction: 0.25, tbt_ms: { p50: 1, p99: 2 }, tokens_per_s: 1000, stall_ms: 0, masking_efficiency: 1 } },
    hil: { warnings: [], verify: verify.value },
  }),
  writeHilRunDir: () => undefined,
}));

const { main } = await import('../../cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'kvtier-hil-exit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void (out += `${a.join(' ')}\n`));
  const write = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => ((err += String(s)), true));
  try {
    const code = await main(['node', 'kvtier', 'hil', 'run', '--trace', join(dir, 'x.kvt'), '--policy', 'full', '--backend', 'host', '--verify', '--out', join(dir, 'out')]);
    return { code, out, err };
  } finally {
    log.mockRestore();
    write.mockRestore();
  }
}

describe('kvtier hil run --verify: exit status', () => {
  it('0 when every block holds its bytes', async () => {
    verify.value = { checked: 10, mismatches: 0 };
    const r = await run();
    expect(r.out).toMatch(/verify: 10 blocks checked, 0 mismatches/);
    expect(r.code).toBe(0);
  });

  it('1 with a mismatch, naming the first block that differs', async () => {
    verify.value = { checked: 10, mismatches: 3, firstMismatch: 'layer 1 block 4 (tier 2, 2 bits)' };
    const r = await run();
    expect(r.out).toMatch(/verify: 10 blocks checked, 3 mismatches \(first: layer 1 block 4 \(tier 2, 2 bits\)\)/);
    expect(r.err).toMatch(/kvtier: error: block bytes differ from what was written/);
    expect(r.code).toBe(1);
  });
});
