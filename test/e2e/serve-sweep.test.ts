import * as fs from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runSweepFile } from '../../studies/run-sweep.js';
import { SWEEP_REPORTERS } from '../../reports/sweep-reporters.js';

const dir = mkdtempSync(join(tmpdir(), 'kvtier-serve-sweep-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('serving sweep', () => {
  it('runs the grid into the same results table and report contract, recording failures', async () => {
    const file = join(dir, 'serve.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        kind: 'serve',
        name: 'tiny-serve',
        requests: ['mooncake:synthetic'],
        caches: ['lru', 'nope'],
        capacities: [20000, 2000000],
        hardware: ['h100-pcie5'],
        models: ['llama-3-8b'],
        time_scales: [4],
        limit: 150,
      }),
    );
    const out = join(dir, 'out');
    const { rows } = await runSweepFile(file, { out, workers: 0, progress: false, report: SWEEP_REPORTERS });
    expect(rows.map((r) => r.status)).toEqual(['ok', 'ok', 'failed', 'failed']);
    expect(rows[2].error).toMatch(/nope/);
    const ok = rows.slice(0, 2) as unknown as { prefix_hit_ratio: number; served: number; refused: number; requests: number }[];
    // a larger cache never hits less on the same requests
    expect(ok[1].prefix_hit_ratio).toBeGreaterThanOrEqual(ok[0].prefix_hit_ratio);
    for (const r of ok) expect(r.served + r.refused).toBe(r.requests);
    for (const f of ['results.json', 'results.csv', 'results.arrow', 'index.html', 'charts/hit-ratio.svg']) expect(fs.existsSync(join(out, f))).toBe(true);
    // one fixed column set: the failed rows have every column, the ok rows no column outside it
    const csv = fs.readFileSync(join(out, 'results.csv'), 'utf8').split('\n');
    expect(csv[0]).toBe(
      'id,status,error,trace,cache_policy,model,hardware,time_scale,capacity,capacity_tokens,requests,served,refused,backpressure_events,' +
        'prefix_hit_ratio,theoretical_prefix_hit_ratio,hit_hbm,hit_dram,hit_cxl,hit_nvme,ttft_p50_ms,tbt_p50_ms,ttft_p90_ms,tbt_p90_ms,' +
        'ttft_p99_ms,tbt_p99_ms,slo_attainment,requests_per_s,output_tokens_per_s,bytes_total,run_dir',
    );
    expect(csv.length).toBe(6);
    expect(csv[3]).toMatch(/^0002_mooncake_synthetic_h100-pcie5_llama-3-8b_x4_nope_20000tok,failed,"?unknown cache policy/);
    const json = JSON.parse(fs.readFileSync(join(out, 'results.json'), 'utf8')) as Record<string, unknown>[];
    expect(json[1].hit_hbm).toBe((rows[1] as unknown as Record<string, unknown>).hit_hbm);
    expect(json[2].hit_hbm).toBe(null);
  });

  it('rejects a malformed serving sweep naming the field', async () => {
    const file = join(dir, 'bad.json');
    fs.writeFileSync(file, JSON.stringify({ kind: 'serve', requests: ['mooncake:synthetic'], caches: ['lru'], capacities: [-5], hardware: ['h100-pcie5'], models: ['llama-3-8b'] }));
    await expect(runSweepFile(file, { out: join(dir, 'bad-out'), workers: 0, progress: false })).rejects.toThrow(/capacities\[0\] must be positive token counts/);
    expect(fs.existsSync(join(dir, 'bad-out'))).toBe(false);
  });
});
