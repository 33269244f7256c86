import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withHostPace } from '../../hil/validate/resimulate.js';
import { calibrationHostProbe } from '../../hil/validate/validate.js';
import type { HardwareProfile } from '../../sim/hardware/profile.js';

const profile = (gpu: Partial<HardwareProfile['gpu']>): HardwareProfile => ({
  schema: 'kvtier-hardware/v1',
  name: 't',
  description: '',
  gpu: { name: 'g', hbm_bandwidth_GBps: 3000, fp16_TFLOPs: 900, kernel_launch_us: 3, reserved_GiB: 1, ...gpu },
  tiers: [],
  links: [],
  sources: {},
});

describe('withHostPace', () => {
  it('multiplies every host issue cost the profile has by the factor, and nothing else', () => {
    const p = profile({ issue_copy_us: 3, issue_record_us: 2, issue_kernel_us: 8, issue_convert_us: 10, issue_attention_us: 16, host_convert_us: 1000, kernel_launch_us: 3 });
    const before = JSON.stringify(p);
    const q = withHostPace(p, 1.25, 'p.json');
    expect([q.gpu.issue_copy_us, q.gpu.issue_record_us, q.gpu.issue_kernel_us, q.gpu.issue_convert_us, q.gpu.issue_attention_us]).toEqual([3.75, 2.5, 10, 12.5, 20]);
    expect([q.gpu.host_convert_us, q.gpu.kernel_launch_us]).toEqual([1000, 3]);
    expect(JSON.stringify(p)).toBe(before);
  });

  it("says in each scaled cost's source what it was and by what factor", () => {
    const p = { ...profile({ issue_copy_us: 3 }), sources: { 'gpu.issue_copy_us': 'measured' } };
    expect(withHostPace(p, 1.5, 'p.json').sources['gpu.issue_copy_us']).toBe("p.json's 3 us x 1.5 (the host's pace probed before the runs over the calibration's); calibrated: measured");
  });

  it('leaves costs the profile does not set unset, and refuses a factor that is not above 0', () => {
    const q = withHostPace(profile({ issue_copy_us: 4 }), 0.5, 'p.json');
    expect(q.gpu.issue_copy_us).toBe(2);
    expect('issue_record_us' in q.gpu).toBe(false);
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => withHostPace(profile({}), bad, 'p.json')).toThrow(/p\.json: the host pace factor must be a number above 0/);
  });
});

describe('calibrationHostProbe', () => {
  it("reads the probe from the fit file beside a profile, and nothing where there is none or it is not a reading", () => {
    const dir = mkdtempSync(join(tmpdir(), 'kvtier-probe-'));
    try {
      const fit = (m: unknown) => writeFileSync(join(dir, 'p.fit.json'), JSON.stringify({ measurements: m }));
      expect(calibrationHostProbe(join(dir, 'p.json'))).toBeUndefined();
      fit({ host_probe: { copy_us: 2.5, lists_us: [2.5] } });
      expect(calibrationHostProbe(join(dir, 'p.json'))).toBe(2.5);
      fit({ host_probe: { copy_us: 0 } });
      expect(calibrationHostProbe(join(dir, 'p.json'))).toBeUndefined();
      fit({});
      expect(calibrationHostProbe(join(dir, 'p.json'))).toBeUndefined();
      writeFileSync(join(dir, 'p.fit.json'), '{not json');
      expect(calibrationHostProbe(join(dir, 'p.json'))).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
