// A copy of validate dir SRC whose profiles carry the per-direction layout fits, copies priced at their start
// (what the calibration wrote before the per-batch fit): node lab/experiments/former-copy-model.mjs SRC DST (from the repository root, after npx tsc)
import { cpSync, readFileSync, writeFileSync, readdirSync } from 'node:fs';
const { applyPerDirectionLayoutFits } = await import('../../dist/hil/calibrate/calibrate.js');
const [src, dst] = process.argv.slice(2);
cpSync(src, dst, { recursive: true });
for (const f of readdirSync(`${dst}/profiles`).filter((f) => f.endsWith('.json') && !f.endsWith('.fit.json'))) {
  const p = JSON.parse(readFileSync(`${dst}/profiles/${f}`, 'utf8'));
  const fit = JSON.parse(readFileSync(`${dst}/profiles/${f.replace(/\.json$/, '.fit.json')}`, 'utf8'));
  delete p.gpu.copy_batch_us; delete p.gpu.copy_under_compute;
  const hbm = p.tiers[0].name;
  const pcie = p.links.findIndex((l) => l.a === hbm || l.b === hbm);
  applyPerDirectionLayoutFits(p, pcie, fit.fits, 'legacy', fit.measurements.layout_info);
  writeFileSync(`${dst}/profiles/${f}`, JSON.stringify(p, null, 2));
  console.log(f, JSON.stringify(p.links[pcie]).slice(0, 300));
}
