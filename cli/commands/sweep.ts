import type { Command } from 'commander';
import type { SweepSpec } from '../../studies/sweep-spec.js';
import { intFlag } from '../parse-pairs.js';
import { progressBar } from '../progress.js';
import type { SweepRow } from '../../sim/metrics/summary.js';

function shardFlag(v: string): { index: number; count: number } {
  const m = /^(\d+)\/(\d+)$/.exec(v);
  if (!m || Number(m[2]) < 1 || Number(m[1]) >= Number(m[2])) throw new Error(`--shard must be i/N with 0 <= i < N (got "${v}")`);
  return { index: Number(m[1]), count: Number(m[2]) };
}

const SIGNAL_EXIT: Record<string, number> = { SIGINT: 130, SIGTERM: 143 };

export function registerSweep(program: Command): void {
  const sweep = program
    .command('sweep')
    .description('run a grid of configurations (JSON or YAML) in parallel and write results + a report; "sweep merge" combines shards');
  sweep
    .command('run <file>', { isDefault: true })
    .description('run a sweep file (the default: "kvtier sweep FILE --out DIR"); re-running after a kill or Ctrl-C continues where it stopped')
    .option('--out <dir>', 'sweep directory to write (results, runs/, index.html); required unless --dry-run')
    .option('--workers <n>', 'parallel workers (0 = in this thread; default: one per core)', intFlag('--workers'))
    .option('--shard <i/N>', 'run only configurations with index % N == i (combine with "kvtier sweep merge")', shardFlag)
    .option('--force', 'replace an existing finished sweep directory at --out (saved progress of an interrupted run is still reused)')
    .option('--restart', 'discard the saved progress of an interrupted run of this --out and start over')
    .option('--dry-run', 'check every configuration (policies and options, budgets, hardware, models, traces) and print the count; runs nothing')
    .action(async (file: string, o) => {
      // the studies and reports (worker pool, Arrow, Vega) load here, not when the command line is parsed
      const { readAnySweepSpec } = await import('../../studies/sweep-spec.js');
      const spec = readAnySweepSpec(file);
      const serve = 'kind' in spec && spec.kind === 'serve';
      if (o.dryRun) {
        const { checkServeSweep, checkSweep } = await import('../../studies/check-sweep.js');
        const check = serve ? checkServeSweep(spec, file) : checkSweep(spec as SweepSpec, file);
        const shardNote = o.shard ? ` (shard ${o.shard.index}/${o.shard.count} runs those with index % ${o.shard.count} == ${o.shard.index})` : '';
        if (check.errors.length) {
          for (const e of check.errors) process.stderr.write(`kvtier: error: ${e}\n`);
          process.stderr.write(`kvtier: ${check.errors.length} error(s) in ${file}; nothing was run\n`);
          process.exitCode = 1;
          return;
        }
        console.log(`${file}: ${check.count} configurations, all valid${shardNote}`);
        return;
      }
      if (!o.out) throw new Error('sweep: --out <dir> is required (or pass --dry-run to only check the file)');
      const [{ runServeSweep, runSweep }, { SweepInterrupted }, { SWEEP_REPORTERS }, { sweepConsoleTable }] = await Promise.all([
        import('../../studies/run-sweep.js'),
        import('../../studies/durable-sweep.js'),
        import('../../reports/sweep-reporters.js'),
        import('../../reports/sweep-console-table.js'),
      ]);
      const t0 = performance.now();
      const bar = progressBar({ label: 'sweep' });
      const opts = {
        out: o.out,
        workers: o.workers,
        force: Boolean(o.force),
        restart: Boolean(o.restart),
        shard: o.shard,
        progress: true,
        onProgress: bar.active ? bar.callback : undefined,
        report: SWEEP_REPORTERS,
      };
      let result: { rows: { id: string; status: string; error: string }[]; dir: string; reused: number };
      try {
        result = serve ? await runServeSweep(spec, opts, file) : await runSweep(spec as SweepSpec, opts, file);
      } catch (e) {
        if (!(e instanceof SweepInterrupted)) throw e;
        process.stderr.write(`kvtier: ${e.message}\n`);
        process.exitCode = SIGNAL_EXIT[e.signal] ?? 1;
        return;
      } finally {
        bar.stop();
      }
      const { rows, dir, reused } = result;
      const failed = rows.filter((r) => r.status !== 'ok');
      const reusedNote = reused > 0 ? `, ${reused} reused from an interrupted run` : '';
      console.log(`${rows.length - failed.length} of ${rows.length} configurations ok${reusedNote}; report: ${dir}/index.html (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
      // the numbers at a glance (attention sweeps; the report page has every column)
      const table = serve ? '' : sweepConsoleTable(rows as SweepRow[]);
      if (table) process.stdout.write(`\n${table}`);
      for (const f of failed) console.log(`FAILED ${f.id}: ${f.error}`);
      // the results and report are written, but a sweep with failures is not a complete success
      if (failed.length > 0) process.exitCode = 1;
    });
  sweep
    .command('merge <dirs...>')
    .description('combine the directories of "kvtier sweep --shard i/N" runs into one results table and report')
    .requiredOption('--out <dir>', 'merged sweep directory to write')
    .option('--force', 'replace an existing directory')
    .action(async (dirs: string[], o) => {
      const [{ mergeShards }, { SWEEP_REPORTERS }] = await Promise.all([import('../../studies/merge-shards.js'), import('../../reports/sweep-reporters.js')]);
      const r = await mergeShards(dirs, o.out, { force: Boolean(o.force), report: SWEEP_REPORTERS });
      console.log(`merged ${dirs.length} shards: ${r.rows - r.failed} of ${r.rows} configurations ok; report: ${r.dir}/index.html`);
      if (r.failed > 0) process.exitCode = 1;
    });
  program
    .command('report')
    .description('(re)write the report page of a sweep directory')
    .argument('<dir>', 'sweep directory')
    .option('--title <title>', 'page title')
    .action(async (dir, o) => {
      const [{ readSweepRows }, { writeSweepReport }] = await Promise.all([import('../../studies/sweep-results.js'), import('../../reports/sweep-dir-report.js')]);
      const rows = readSweepRows(dir);
      const page = await writeSweepReport(dir, o.title ?? dir.split('/').filter(Boolean).pop() ?? 'sweep', rows, `kvtier report ${dir}`);
      console.log(`wrote ${page}`);
    });
}
