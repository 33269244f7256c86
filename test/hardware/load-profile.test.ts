import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listHardware, loadHardware, resolveMachine } from '../../sim/hardware/load-profile.js';
import { lineColumn, readJsonFile } from '../../sim/hardware/read-json-file.js';
import { validProfile } from './valid-profile.js';

const dir = mkdtempSync(join(tmpdir(), 'kvtier-hw-'));
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('loadHardware', () => {
  it('loads a preset by name', () => {
    expect(loadHardware('a100-pcie4')).toEqual(resolveMachine('a100-pcie4'));
  });

  it('loads a profile file by path, round-tripping a preset through JSON', () => {
    const preset = resolveMachine('h200-pcie5');
    const path = file('h200.json', JSON.stringify(preset, null, 2));
    expect(loadHardware(path)).toEqual(preset);
  });

  it('lists the presets for an unknown name or a missing file', () => {
    const names = listHardware().map((m) => m.name).join(', ');
    expect(() => loadHardware('h100')).toThrowError(`hardware "h100" is neither a preset nor a file`);
    expect(() => loadHardware('h100')).toThrowError(`presets: ${names}`);
    expect(() => loadHardware(join(dir, 'missing.json'))).toThrowError(`no file at ${join(dir, 'missing.json')}`);
  });

  it('names the file and the position of a JSON syntax error', () => {
    const path = file('broken.json', '{\n  "a": 1,\n}');
    expect(() => loadHardware(path)).toThrowError(`${path}: invalid JSON at line 3, column 1:`);
  });

  it('names the file and every field problem of an invalid profile', () => {
    const p = validProfile() as unknown as Record<string, any>;
    p.links[0].b = 'nvm';
    p.gpu.fp16_TFLOPs = -1;
    const path = file('bad.json', JSON.stringify(p));
    expect(() => loadHardware(path)).toThrowError(
      `${path}: gpu.fp16_TFLOPs must be a number > 0 (got -1)\n` +
        `${path}: links[0].b "nvm" is not a tier (tiers: hbm, dram, cxl, nvme, hdd)`,
    );
  });
});

describe('resolveMachine', () => {
  it('lists the valid names for an unknown machine', () => {
    expect(() => resolveMachine('tpu-v5')).toThrowError(
      `unknown hardware preset "tpu-v5" (valid: ${listHardware().map((m) => m.name).join(', ')})`,
    );
  });
});

describe('readJsonFile', () => {
  it('says when the file does not exist', () => {
    expect(() => readJsonFile(join(dir, 'none.json'))).toThrowError(`${join(dir, 'none.json')}: cannot read (no such file)`);
  });

  it('counts lines and columns from 1', () => {
    expect(lineColumn('ab\ncd', 0)).toBe('line 1, column 1');
    expect(lineColumn('ab\ncd', 4)).toBe('line 2, column 2');
  });
});
