// When the HIL tests skip and when a missing addon fails them (test/hil/availability.ts).
import { describe, expect, it } from 'vitest';
import { availabilityOf, hostRequirement } from './availability.js';

const missing = { ok: false as const, reasons: ['/x/kvtier_hil.node: not found', '/y/kvtier_hil.node: not found'] };
const noGpu = () => ({ available: false, reason: 'no CUDA device' });
const required = { required: true, why: 'CI=true' };
const optional = { required: false, why: 'neither KVTIER_HIL_REQUIRE_HOST=1 nor CI=true' };

describe('hostRequirement', () => {
  it('requires the host backend under CI=true or KVTIER_HIL_REQUIRE_HOST=1, and lets 0 override CI', () => {
    expect(hostRequirement({})).toEqual(optional);
    expect(hostRequirement({ CI: 'true' })).toEqual(required);
    expect(hostRequirement({ CI: '1' })).toEqual(optional);
    expect(hostRequirement({ KVTIER_HIL_REQUIRE_HOST: '1' })).toEqual({ required: true, why: 'KVTIER_HIL_REQUIRE_HOST=1' });
    expect(hostRequirement({ CI: 'true', KVTIER_HIL_REQUIRE_HOST: '0' })).toEqual({ required: false, why: 'KVTIER_HIL_REQUIRE_HOST=0' });
    expect(hostRequirement({ CI: 'true', KVTIER_HIL_REQUIRE_HOST: '' })).toEqual(required);
  });
  it('refuses a value other than 0 or 1, naming the variable', () => {
    expect(() => hostRequirement({ KVTIER_HIL_REQUIRE_HOST: 'yes' })).toThrow('KVTIER_HIL_REQUIRE_HOST: expected 0 or 1, got "yes"');
  });
});

describe('availabilityOf', () => {
  it('skips both backends without the addon when the host is not required', () => {
    const reason = 'native addon not built (/x/kvtier_hil.node: not found); run npm run build:native';
    expect(availabilityOf('host', missing, optional, noGpu)).toEqual({ available: false, reason });
    expect(availabilityOf('cuda', missing, optional, noGpu)).toEqual({ available: false, reason });
  });
  it('fails the host backend without the addon when it is required, giving every reason', () => {
    expect(() => availabilityOf('host', missing, required, noGpu)).toThrow(
      'the host HIL backend is required here (CI=true) and missing: native addon not built (/x/kvtier_hil.node: not found); run npm run build:native. ' +
        'Every reason: /x/kvtier_hil.node: not found; /y/kvtier_hil.node: not found',
    );
  });
  it('still skips cuda where the host is required: no GPU is no error', () => {
    expect(availabilityOf('cuda', missing, required, noGpu).available).toBe(false);
    expect(availabilityOf('cuda', { ok: true }, required, noGpu)).toEqual({ available: false, reason: 'no CUDA device' });
  });
  it('with the addon: host available, cuda as the device probe says', () => {
    expect(availabilityOf('host', { ok: true }, required, noGpu)).toEqual({ available: true, reason: '' });
    expect(availabilityOf('cuda', { ok: true }, optional, () => ({ available: true, reason: 'GPU usable' }))).toEqual({ available: true, reason: 'GPU usable' });
  });
});
