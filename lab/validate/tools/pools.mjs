// The pools and per-policy summaries of a validation run, generated and captured traces apart, as markdown
// tables: `poolSummary` of hil/validate/validate.ts over the run's validate.json (build dist/ first).
//   node lab/validate/tools/pools.mjs DIR
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node lab/validate/tools/pools.mjs DIR (a validation output directory with validate.json)');
  process.exit(2);
}
const root = fileURLToPath(new URL('../../..', import.meta.url));
const { poolSummary } = await import(join(root, 'dist/hil/validate/validate.js'));
const file = join(dir, 'validate.json');
if (!existsSync(file)) {
  console.error(`pools: no validate.json in ${dir} (give a validation output directory)`);
  process.exit(2);
}
const r = JSON.parse(readFileSync(file, 'utf8'));
if (r.schema !== 'kvtier-hil-validate/v1') {
  console.error(`pools: ${file} is not a validation result (schema ${String(r.schema)}, expected kvtier-hil-validate/v1)`);
  process.exit(2);
}
const skip = r.grid.skip_steps;
const pct = (x) => (x * 100).toFixed(2);
const mp = (m) => (m && m.n ? `${pct(m.median)} / ${pct(m.p95)}%` : '-');
const row = (label, s) => `| ${label} | ${s.passed} of ${s.cells} | ${mp(s.error)} | ${mp(s.spread)} | ${mp(s.error_repeatable)} |`;
console.log('| traces, pool | cells passing | strict: median / p95 | runs\' own spread | steps the runs repeat |');
console.log('| --- | --- | --- | --- | --- |');
for (const kind of ['generated', 'captured']) {
  const cells = r.cells.filter((c) => c.trace_kind === kind && c.status === 'ok');
  for (const [name, pool] of [['moving, storage apart', 'moving'], ['storage', 'storage'], ['moving nothing', 'non-moving']]) {
    const s = poolSummary(name, cells.filter((c) => c.pool === pool), skip);
    if (s.cells) console.log(row(`${kind}, ${name}`, s));
  }
}
console.log('\nPer policy, generated traces:\n');
console.log('| policy | cells passing | strict: median / p95 | runs\' own spread | steps the runs repeat |');
console.log('| --- | --- | --- | --- | --- |');
const gen = r.cells.filter((c) => c.trace_kind === 'generated' && c.status === 'ok');
for (const label of [...new Set(gen.map((c) => c.label))]) {
  const cs = gen.filter((c) => c.label === label);
  console.log(row(`${label} (${[...new Set(cs.map((c) => c.pool))].join('/')})`, poolSummary(label, cs, skip)));
}
