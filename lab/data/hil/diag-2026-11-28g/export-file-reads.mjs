// The file reads of a stored validate run's cell as the HIL lowered them, in perf/nvme-bench.c's replay
// format: the file's bytes, then per join ("B step n") its n reads as "offset bytes", each read's bytes
// rounded up to 4 KiB as the file tier issues them (O_DIRECT).
//   npm run build && node lab/data/hil/diag-2026-11-28g/export-file-reads.mjs VALIDATE_DIR WORK_DIR CELL_ID OUT.txt
import fs from 'node:fs';
import { basename, join } from 'node:path';
import { registerBuiltinPolicies } from '../../../../dist/policies/builtin.js';
import { recordAndLower } from '../../../../dist/hil/executor/hil-run.js';
import { expandGrid } from '../../../../dist/hil/validate/grid.js';
import { cellRunConfig, traceFile } from '../../../../dist/hil/validate/validate.js';
import { readTraceHeader } from '../../../../dist/traces/trace-reader.js';

const [dir, work, id, out] = process.argv.slice(2);
if (!dir || !work || !id || !out) throw new Error('usage: export-file-reads.mjs VALIDATE_DIR WORK_DIR CELL_ID OUT.txt');
registerBuiltinPolicies();
fs.mkdirSync(join(work, 'traces'), { recursive: true });
const v = JSON.parse(fs.readFileSync(join(dir, 'validate.json'), 'utf8'));
const c = expandGrid(v.grid, (t) => readTraceHeader(t.path).prompt_tokens).find((x) => x.id === id);
const b = v.cells.find((x) => x.id === id);
if (!c || !b) throw new Error(`${id}: no such cell in ${dir}`);
const entry = v.profiles.find((p) => p.model === b.model);
// (the profile the cell was planned with: the pooled one where the run pooled its copy terms)
const prof = join(dir, 'profiles', basename(entry.copy_terms_pooled?.file ?? entry.file));
const { lowered } = recordAndLower(cellRunConfig(c, traceFile(c, v.grid, work), prof), { backend: 'cuda' });
const align = (x) => Math.ceil(x / 4096) * 4096;
const lines = [];
let end = 0;
let reads = 0;
const sizes = new Map();
lowered.steps.forEach((s, si) => {
  let batch = [];
  for (const op of s.ops) {
    if (op.o === 'fileRead') {
      batch.push(`${op.offset} ${align(op.bytes)}`);
      end = Math.max(end, op.offset + align(op.bytes));
      sizes.set(align(op.bytes), (sizes.get(align(op.bytes)) ?? 0) + 1);
      reads++;
    } else if (op.o === 'fileJoin' && batch.length > 0) {
      lines.push(`B ${si} ${batch.length}`, ...batch);
      batch = [];
    }
  }
  if (batch.length > 0) lines.push(`B ${si} ${batch.length}`, ...batch);
});
const fileBytes = Math.ceil(end / 2 ** 20) * 2 ** 20;
fs.writeFileSync(out, `${fileBytes}\n${lines.join('\n')}\n`);
console.log(JSON.stringify({ id, file_MiB: fileBytes / 2 ** 20, reads, steps: lowered.steps.length, sizes: Object.fromEntries([...sizes].sort((a, b) => a[0] - b[0])) }));
