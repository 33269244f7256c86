// `kvtier hil validate GRID.json`: the simulator against the hardware on a held-out grid
// (hil/validate/validate.ts), the grid file read by studies/validate-grid.ts, the page by
// reports/hil-validate-report.ts; `kvtier hil validate-report DIR` renders the page again (e.g. from
// the results of perf/device/validate.sh); `kvtier hil validate-resim DIR --out DIR2` recomputes the
// simulator's side against the stored hardware steps (hil/validate/resimulate.ts); `kvtier hil
// pool-profiles BASE --from FILES --out FILE` writes BASE with its host-link copy terms pooled over other
// calibrations (hil/validate/pooled-link-terms.ts).
import type { Command } from 'commander';
import type { AttentionOptions } from '../../hil/addon-types.js';
import { attnFlag, resolveAttentionOptions } from '../../hil/attention-options.js';
import type { BackendKind } from '../../hil/addon-types.js';
import { intFlag } from '../parse-pairs.js';
import { progressBar } from '../progress.js';

const BACKENDS = ['cuda', 'host', 'auto'];

function profileFlag(value: string, prev: Record<string, string> = {}): Record<string, string> {
  const i = value.indexOf('=');
  const [model, file] = i > 0 && !value.slice(0, i).includes('/') ? [value.slice(0, i), value.slice(i + 1)] : ['*', value];
  if (!file) throw new Error(`--profile: give FILE or MODEL=FILE (got "${value}")`);
  if (prev[model]) throw new Error(`--profile: ${model === '*' ? 'a profile for every model' : `model ${model}`} is given twice`);
  return { ...prev, [model]: file };
}

interface ValidateFlags {
  out?: string;
  backend: string;
  runs?: number;
  profile?: Record<string, string>;
  maxSeconds?: number;
  plan?: boolean;
  nvmeDir?: string;
  ioThreads?: number;
  buffered?: boolean;
  attn?: AttentionOptions;
  seed: number;
  report: boolean;
  /** false with --no-retime-copies */
  retimeCopies: boolean;
  copyTermsFrom?: string[];
}

export function registerHilValidate(hil: Command): void {
  hil
    .command('validate-report')
    .description('render the report page of a "kvtier hil validate" directory from its validate.json')
    .argument('<dir>', 'validate output directory')
    .action(async (dir: string) => {
      const { renderValidateReport } = await import('../../reports/hil-validate-report.js');
      console.log(`wrote ${await renderValidateReport(dir)}`);
    });

  hil
    .command('validate-resim')
    .description('the simulator side of a "kvtier hil validate" directory done again with this build\'s simulator against the hardware steps it stored (no GPU): new errors, pools and page in --out')
    .argument('<dir>', 'validate output directory (validate.json, profiles/)')
    .requiredOption('--out <dir>', 'directory for the recomputed validate.json, cells.csv, traces and page (not <dir>)')
    .option('--force', 'replace --out when it exists')
    .option('--link-as-measured', "simulate each cell with the host link's bandwidth as its runs measured it before they ran (a diagnostic: the link's drift since the calibration taken out)")
    .option('--host-as-measured', "simulate each cell with the host's issue costs scaled to the pace its runs' host issue probe read before they ran, over its calibration's probe (a diagnostic: the host's drift since the calibration taken out)")
    .option('--disk-as-measured', "simulate each storage cell with its storage link's reads and writes fitted to the disk probe taken right before its runs (a diagnostic: the disk's drift since the calibration taken out)")
    .option('--copy-terms-from <profiles...>', "simulate every cell with its profile's host-link copy terms (alpha, GBps, switch, spread, adjacent, bulk, under-compute, copy batch) at their medians over those of these profiles named for its model (other calibrations of the same GPU: profiles/MODEL.json as hil validate writes them): the calibration's own readings of them set aside")
    .option('--as-calibrated', 'for a run made with --copy-terms-from: simulate every cell with its calibrated profile rather than the pooled one the run used')
    .action(async (dir: string, flags: { out: string; force?: boolean; linkAsMeasured?: boolean; hostAsMeasured?: boolean; diskAsMeasured?: boolean; copyTermsFrom?: string[]; asCalibrated?: boolean }) => {
      const { resimulate } = await import('../../hil/validate/resimulate.js');
      const { renderValidateReport } = await import('../../reports/hil-validate-report.js');
      const bar = progressBar({ label: 'resimulate' });
      const r = resimulate({ dir, out: flags.out, force: flags.force, linkAsMeasured: flags.linkAsMeasured, hostAsMeasured: flags.hostAsMeasured, diskAsMeasured: flags.diskAsMeasured, copyTermsFrom: flags.copyTermsFrom, asCalibrated: flags.asCalibrated, onProgress: bar.callback });
      bar.stop();
      const { formatValidate } = await import('../../hil/validate/format.js');
      const { writeFileSync } = await import('node:fs');
      const { join } = await import('node:path');
      const text = formatValidate(r);
      writeFileSync(join(flags.out, 'summary.txt'), text + '\n');
      console.log(text);
      console.log(`wrote ${await renderValidateReport(flags.out)}`);
    });

  hil
    .command('pool-profiles')
    .description("a profile whose host-link copy terms (and copy batch cost) are their medians over other calibrations of the same GPU, the rest as the base profile has it")
    .argument('<base>', 'hardware profile file to start from (e.g. this machine\'s calibration)')
    .requiredOption('--from <profiles...>', 'profile files to take the medians over (calibrations of the same GPU and of the base\'s model: the terms are fitted to its copy layouts; the base is not counted unless listed)')
    .requiredOption('--out <file>', 'profile file to write')
    .option('--force', 'replace --out when it exists')
    .action(async (base: string, flags: { from: string[]; out: string; force?: boolean }) => {
      const { existsSync } = await import('node:fs');
      const { readPool, withPooledLinkTerms } = await import('../../hil/validate/pooled-link-terms.js');
      const { writeAtomic } = await import('../../hil/validate/validate.js');
      if (existsSync(flags.out) && !flags.force) throw new Error(`--out ${flags.out} exists; give --force to replace it`);
      const [own] = readPool([base]);
      const pooled = withPooledLinkTerms(own.profile, readPool(flags.from), base);
      writeAtomic(flags.out, JSON.stringify(pooled, null, 2) + '\n');
      console.log(`wrote ${flags.out}: ${base} with its host-link copy terms at their medians over ${flags.from.length === 1 ? 'one profile' : `${flags.from.length} profiles`}`);
    });

  hil
    .command('validate')
    .description('the simulator against the hardware on a held-out grid (traces x contexts x models x budgets x policies, N runs per cell): per-step errors, the runs\' spread, pass/miss per cell, a report page')
    .argument('<grid>', 'grid file (a sweep file plus contexts, steps, runs; see docs/hil-validate.md)')
    .option('--out <dir>', 'output directory (default runs/validate-<grid name>); a rerun with the same directory reuses finished cells')
    .option('--backend <cuda|host|auto>', 'HIL backend', 'auto')
    .option('--runs <n>', 'HIL runs per cell (default: the grid\'s "runs")', intFlag('--runs', 1))
    .option('--profile <[model=]file>', 'a profile calibrated earlier instead of calibrating here, for every model or for one (repeatable)', profileFlag)
    .option('--max-seconds <s>', 'start no cell that would end past this many seconds from the start (the rest is listed as not run; rerun to go on)', intFlag('--max-seconds', 1))
    .option('--plan', 'print the cells and the time estimate, run nothing')
    .option('--nvme-dir <dir>', 'directory of the storage tier file (default: the OS temp dir)')
    .option('--io-threads <n>', 'I/O threads of the storage tier file (default 32)', intFlag('--io-threads', 1))
    .option('--buffered', 'do not ask for O_DIRECT on the storage tier file')
    .option('--seed <n>', 'seed of the KV bytes', intFlag('--seed'), 1)
    .option('--attn <KEY=VALUE>', 'attention option KEY=VALUE, repeatable (the list: kvtier hil options)', attnFlag)
    .option('--no-report', 'write validate.json and cells.csv only')
    .option('--no-retime-copies', "do not time the calibrations' copy batches a second time (by default, on the cuda backend, each is timed again once every model is calibrated and its lesser timing kept)")
    .option('--copy-terms-from <profiles...>', "after calibrating, plan and simulate every cell with its profile's host-link copy terms (alpha, GBps, switch, spread, adjacent, bulk, under-compute, copy batch) at their medians over those of these profiles named for its model (other calibrations of the same GPU: profiles/MODEL.json as hil validate writes them), written beside it as profiles/MODEL.pooled.json")
    .action(async (file: string, o: ValidateFlags) => {
      if (!BACKENDS.includes(o.backend)) throw new Error(`--backend: expected one of ${BACKENDS.join(', ')}, got "${o.backend}"`);
      if (o.attn) resolveAttentionOptions(o.attn);
      const { readValidateGrid } = await import('../../studies/validate-grid.js');
      const { validate } = await import('../../hil/validate/validate.js');
      const grid = readValidateGrid(file);
      if (o.runs !== undefined) grid.runs = o.runs;
      const out = o.out ?? `runs/validate-${grid.name.replace(/[^A-Za-z0-9._-]+/g, '_')}`;
      const bar = progressBar({ label: 'validate' });
      let r;
      try {
        r = await validate({
          grid,
          out,
          hil: { backend: o.backend as BackendKind | 'auto', seed: o.seed, nvmeDir: o.nvmeDir, ioThreads: o.ioThreads, directIo: !o.buffered, ...(o.attn ? { attention: o.attn } : {}) },
          ...(o.profile ? { profiles: o.profile } : {}),
          ...(o.maxSeconds !== undefined ? { maxSeconds: o.maxSeconds } : {}),
          planOnly: Boolean(o.plan),
          ...(o.retimeCopies === false ? { retimeCopies: false } : {}),
          ...(o.copyTermsFrom ? { copyTermsFrom: o.copyTermsFrom } : {}),
          log: (s) => console.log(s),
          onProgress: bar.callback,
        });
      } finally {
        bar.stop();
      }
      if (o.plan) {
        for (const c of r.cells) console.log(`  ${c.id}  about ${c.estimate_s.toFixed(1)} s`);
        return;
      }
      const { formatValidate } = await import('../../hil/validate/format.js');
      console.log(formatValidate(r));
      if (o.report) {
        const { renderValidateReport } = await import('../../reports/hil-validate-report.js');
        console.log(`wrote ${await renderValidateReport(out)}`);
      }
    });
}
