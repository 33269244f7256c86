// `kvtier hil doctor`: which HIL backends can run here, and why not.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { DeviceInfo } from './addon-types.js';
import { loadHil } from './load-addon.js';

export interface HilDoctorReport {
  addonPath?: string;
  addonErrors?: string[];
  build?: { builtAt: string; cuda: boolean; note: string };
  backends: {
    host: { available: boolean; reason: string };
    cuda: { available: boolean; reason: string; compiled: boolean; device?: DeviceInfo };
  };
  cxl: string;
}

export function hilDoctor(): HilDoctorReport {
  const cxl = 'CXL: no hardware here; simulation-only, and HIL reports say so';
  const loaded = loadHil();
  if (!loaded.ok) {
    const why = 'native addon not loaded (see addonErrors)';
    return { addonErrors: loaded.reasons, backends: { host: { available: false, reason: why }, cuda: { available: false, reason: why, compiled: false } }, cxl };
  }
  const infoPath = join(dirname(loaded.path), 'build-info.json');
  const build = existsSync(infoPath) ? (JSON.parse(readFileSync(infoPath, 'utf8')) as HilDoctorReport['build']) : undefined;
  const p = loaded.addon.probeCuda();
  return {
    addonPath: loaded.path,
    build,
    backends: {
      host: { available: true, reason: 'CPU backend: real memory copies, real file I/O, CPU kernels' },
      cuda: { available: p.available, reason: p.available ? 'GPU usable' : p.reason, compiled: p.compiled, device: p.device },
    },
    cxl,
  };
}

export function formatHilDoctor(r: HilDoctorReport): string {
  const lines = ['kvtier HIL doctor'];
  lines.push(`  addon: ${r.addonPath ?? 'not loaded'}`);
  for (const e of r.addonErrors ?? []) lines.push(`    - ${e}`);
  if (r.build) lines.push(`  built: ${r.build.builtAt}${r.build.cuda ? ' with cuda' : ` host only (${r.build.note})`}`);
  lines.push(`  host backend: ${r.backends.host.available ? 'available' : 'unavailable'} — ${r.backends.host.reason}`);
  const c = r.backends.cuda;
  const dev = c.device ? ` — ${c.device.name}, sm_${c.device.computeCapability.replace('.', '')}, ${(c.device.totalMemBytes / 2 ** 30).toFixed(0)} GiB, ${c.device.multiprocessors} SMs${c.device.pciGeneration ? `, PCIe Gen${c.device.pciGeneration} x${c.device.pciWidth}` : ''}` : '';
  lines.push(`  cuda backend: ${c.available ? 'available' : 'unavailable'}${dev}${c.available ? '' : ` — ${c.reason}`}`);
  lines.push(`  ${r.cxl}`);
  return lines.join('\n');
}
