import type { Command } from 'commander';
import { readSweepRows, writeSweepReport } from '../../sim/sweep/sweep-results.js';
import { runSweepFile } from '../../sim/sweep/run-sweep.js';
import { intFlag } from '../parse-pairs.js';

function shardFlag(v: string): { index: number; count: number } {
  const m = /^(\d+)\/(\d+)$/.exec(v);
  if (!m || Number(m[2]) < 1 || Number(m[1]) >= Number(m[2])) throw new Error(`--shard must be i/N with 0 <= i < N (got "${v}")`);
  return { index: Number(m[1]), count: Number(m[2]) };
}

export function registerSweep(program: Command): void {
  program
    .command('sweep')
    .description('run a grid of configurations (JSON or YAML) in parallel and write results + a report')
    .argument('<file>', 'sweep file')
    .requiredOption('--out <dir>', 'sweep directory to write (results, runs/, index.html)')
    .option('--workers <n>', 'parallel workers (0 = in this thread; default: one per core)', intFlag('--workers'))
    .option('--shard <i/N>', 'run only configurations with index % N == i', shardFlag)
    .option('--force', 'replace an existing directory')
    .action(async (file, o) => {
      const t0 = performance.now();
      const { rows, dir } = await runSweepFile(file, { out: o.out, workers: o.workers, force: Boolean(o.force), shard: o.shard, progress: true });
      const failed = rows.filter((r) => r.status !== 'ok');
      console.log(`${rows.length - failed.length} of ${rows.length} configurations ok; report: ${dir}/index.html (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
      for (const f of failed) console.log(`FAILED ${f.id}: ${f.error}`);
      // the results and report are written, but a sweep with failures is not a complete success
      if (failed.length > 0) process.exitCode = 1;
    });
  program
    .command('report')
    .description('(re)write the report page of a sweep directory')
    .argument('<dir>', 'sweep directory')
    .option('--title <title>', 'page title')
    .action(async (dir, o) => {
      const rows = readSweepRows(dir);
      const page = await writeSweepReport(dir, o.title ?? dir.split('/').filter(Boolean).pop() ?? 'sweep', rows, `kvtier report ${dir}`);
      console.log(`wrote ${page}`);
    });
}
