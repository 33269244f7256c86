import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../cli/main.js';

const dir = fs.mkdtempSync(join(tmpdir(), 'kvtier-readiness-test-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const SHORT = ['--policies', 'synapsevm,dpnc,smartkv', '--context', '256', '--steps', '2', '--needle-steps', '8', '--no-progress'];

async function kvtier(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => ((out += String(s)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => ((err += String(s)), true));
  try {
    process.exitCode = undefined;
    const code = await main(['node', 'kvtier', ...args]);
    return { code, out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
    process.exitCode = undefined;
  }
}

describe('kvtier readiness end to end (short settings)', () => {
  it('writes one report with a verdict per claimed check, the same bytes for the same seed', async () => {
    const a = join(dir, 'a');
    const b = join(dir, 'b');
    const ra = await kvtier('readiness', ...SHORT, '--out', a);
    expect(ra.code).toBe(0);
    expect(ra.out).toMatch(/^synapsevm\s+PASS\s+FAIL\s+FAIL\s+PASS\s*$/m);
    expect(ra.out).toMatch(/^dpnc\s+PASS\s+not claimed\s+PASS\s+not claimed\s*$/m);
    const r = JSON.parse(fs.readFileSync(join(a, 'readiness.json'), 'utf8'));
    expect(r.schema).toBe('kvtier-readiness/v1');
    expect(r.verdicts.map((v: { policy: string; check: string }) => `${v.policy}:${v.check}`)).toEqual([
      'synapsevm:tsunami',
      'synapsevm:precision',
      'synapsevm:stutter',
      'synapsevm:needle',
      'dpnc:tsunami',
      'dpnc:stutter',
      'smartkv:precision',
    ]);
    const tsunami = r.verdicts[0];
    expect(tsunami.readings.find((x: { name: string }) => x.name === 'completed').value).toBe(50);
    expect(tsunami.details.waits_ms).toHaveLength(50);
    // INT4 G128 from the measured table: both readings above 0.012
    const prec = r.verdicts[1];
    expect(prec.readings[0].name).toBe('INT4 G128: attention-output RMSE vs FP16');
    expect(prec.readings[0].source).toMatch(/measured-quality-h100\.json/);
    const html = fs.readFileSync(join(a, 'index.html'), 'utf8');
    for (const h of ['Memory tsunami', 'Precision decay', 'Stutter-free', 'Needle-in-a-haystack', 'strict masking', 'per-element KV RMSE']) expect(html).toContain(h);
    const rb = await kvtier('readiness', ...SHORT, '--out', b);
    expect(rb.code).toBe(0);
    expect(fs.readFileSync(join(b, 'readiness.json'), 'utf8')).toBe(fs.readFileSync(join(a, 'readiness.json'), 'utf8'));
    expect(fs.readFileSync(join(b, 'index.html'), 'utf8')).toBe(html);
  });

  it('refuses bad flags with the valid choices and a non-zero exit', async () => {
    const p = await kvtier('readiness', '--policies', 'synapsevm,h2o', '--out', join(dir, 'x'));
    expect(p.code).not.toBe(0);
    expect(p.err).toContain('"h2o" is not a seed system with readiness claims (valid: synapsevm, dpnc, slep, ntransformer, smartkv)');
    const hw = await kvtier('readiness', '--hardware', 'nope', '--out', join(dir, 'x'));
    expect(hw.code).not.toBe(0);
    expect(hw.err).toContain('presets: h100-pcie5');
    const n = await kvtier('readiness', '--requests', 'many', '--out', join(dir, 'x'));
    expect(n.code).not.toBe(0);
    expect(n.err).toContain('--requests must be an integer >= 1 (got "many")');
    const bud = await kvtier('readiness', '--budget', 'lots', '--out', join(dir, 'x'));
    expect(bud.code).not.toBe(0);
    expect(bud.err).toContain('--budget: cannot read "lots"');
    expect(fs.existsSync(join(dir, 'x'))).toBe(false);
    const again = await kvtier('readiness', ...SHORT, '--policies', 'dpnc', '--out', join(dir, 'a'));
    expect(again.code).not.toBe(0);
    expect(again.err).toContain('already exists; pass --force');
  });
});
