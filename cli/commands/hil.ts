// `kvtier hil ...`: doctor, run (a policy on real memory and kernels), calibrate (microbenchmarks
// fitted into a hardware profile), compare (simulator vs hardware, per step), report (re-render),
// options (the attention options that run, calibrate and compare take with --attn). calibrate and
// compare (and the fitting library they pull in) load when those commands run, so that every
// other command starts without them.
import type { Command } from 'commander';
import type { AttentionOptions } from '../../hil/addon-types.js';
import { attnFlag, formatAttentionOptions, resolveAttentionOptions } from '../../hil/attention-options.js';
import { formatHilDoctor, hilDoctor } from '../../hil/doctor.js';
import { parsePolicyList } from '../../hil/compare/policy-list.js';
import { hilRun, writeHilRunDir, type HilOptions } from '../../hil/executor/hil-run.js';
import { intFlag } from '../parse-pairs.js';
import { progressBar } from '../progress.js';
import { runConfigFromFlags, withRunFlags } from './run.js';
import { registerHilValidate } from './hil-validate.js';

const BACKENDS = ['cuda', 'host', 'auto'];

function ioThreadsFlag(value: string): number {
  const n = intFlag('--io-threads', 1)(value);
  if (n > 64) throw new Error(`--io-threads must be 1 to 64 (got "${value}")`);
  return n;
}

function backendOf(x: string): HilOptions['backend'] {
  if (!BACKENDS.includes(x)) throw new Error(`--backend: expected one of ${BACKENDS.join(', ')}, got "${x}"`);
  return x as HilOptions['backend'];
}

interface HilFlags {
  backend: string;
  seed: number;
  nvmeDir?: string;
  ioThreads?: number;
  buffered?: boolean;
  verify?: boolean;
  attn?: AttentionOptions;
}

function hilOptions(o: HilFlags): HilOptions {
  // checked here, before anything runs: an unknown option or value names the option and its valid values
  if (o.attn) resolveAttentionOptions(o.attn);
  return { backend: backendOf(o.backend), seed: o.seed, nvmeDir: o.nvmeDir, ioThreads: o.ioThreads, directIo: !o.buffered, verify: Boolean(o.verify), ...(o.attn ? { attention: o.attn } : {}) };
}

const ATTN_HELP = 'attention option KEY=VALUE, repeatable (the list: kvtier hil options)';

function withHilFlags(c: Command): Command {
  return c
    .option('--backend <cuda|host|auto>', 'HIL backend', 'auto')
    .option('--seed <n>', 'seed of the KV bytes', intFlag('--seed'), 1)
    .option('--nvme-dir <dir>', 'directory of the NVMe tier file (default: the OS temp dir)')
    .option('--io-threads <n>', 'I/O threads of the NVMe tier file, 1 to 64 (default 32)', ioThreadsFlag)
    .option('--buffered', 'do not ask for O_DIRECT on the NVMe tier file')
    .option('--verify', 'after the run, check every block\'s bytes where it ended up')
    .option('--attn <KEY=VALUE>', ATTN_HELP, attnFlag);
}

export function registerHil(program: Command): void {
  const hil = program.command('hil').description('hardware-in-the-loop: real memory, real kernels');
  hil
    .command('doctor')
    .description('say which HIL backends (cuda, host) are available here, and why not')
    .option('--json', 'print the report as JSON')
    .action((opts: { json?: boolean }) => {
      const report = hilDoctor();
      console.log(opts.json ? JSON.stringify(report, null, 2) : formatHilDoctor(report));
    });

  withHilFlags(withRunFlags(hil.command('run').description('run a policy over an attention trace on real tiers and kernels (same arguments as "kvtier run")'))).action(async (o) => {
    const t0 = performance.now();
    const bar = progressBar({ label: 'hil run' });
    // the bar restarts when the steps start, so that its ETA is the steps' rate, not the setup's
    let stepping = false;
    const onProgress = (done: number, total: number, label?: string) => {
      if (label !== 'setup' && !stepping) {
        stepping = true;
        bar.start(total, done);
      }
      bar.callback(done, total, label);
    };
    let x;
    try {
      x = await hilRun(runConfigFromFlags(o), { ...hilOptions(o), onProgress });
    } finally {
      bar.stop();
    }
    writeHilRunDir(o.out, x, Boolean(o.force));
    const s = x.result.summary;
    for (const w of x.hil.warnings) console.error(`kvtier: warning: ${w}`);
    console.log(
      `${s.policy} on ${s.hardware}, ${s.model}, budget ${(s.hbm_budget_fraction * 100).toFixed(1)}% of KV: TBT p50 ${s.tbt_ms.p50.toFixed(3)} ms, ` +
        `p99 ${s.tbt_ms.p99.toFixed(3)} ms, ${s.tokens_per_s.toFixed(1)} tok/s, stall ${s.stall_ms.toFixed(2)} ms, masking ${(s.masking_efficiency * 100).toFixed(1)}% (measured)`,
    );
    if (x.hil.verify) console.log(`verify: ${x.hil.verify.checked} blocks checked, ${x.hil.verify.mismatches} mismatches${x.hil.verify.firstMismatch ? ` (first: ${x.hil.verify.firstMismatch})` : ''}`);
    console.log(`wrote ${o.out} (${((performance.now() - t0) / 1000).toFixed(2)} s)`);
    if (x.hil.verify && x.hil.verify.mismatches > 0) throw new Error('block bytes differ from what was written (see above)');
  });

  hil
    .command('calibrate')
    .description('microbenchmarks fitted into a kvtier-hardware/v1 profile that "kvtier run" accepts')
    .requiredOption('--out <file>', 'profile JSON to write (fit details beside it, <out>.fit.json)')
    .option('--backend <cuda|host|auto>', 'HIL backend', 'auto')
    .option('--base <preset|file>', 'profile whose unmeasured parts (CXL, HDD, capacities) are kept', 'h100-pcie5')
    .option('--model <name|file>', 'model whose kernel shapes are measured', 'llama-3-8b')
    .option('--group-size <n>', "quantization group size (default 128, or the model's head dimension where smaller)", intFlag('--group-size', 1))
    .option('--file-dir <dir>', 'directory for the file-tier benchmark (default: the OS temp dir)')
    .option('--io-threads <n>', 'I/O threads of the file-tier reads fitted into the nvme link: use the HIL runs\' value, 1 to 64 (default 32)', ioThreadsFlag)
    .option('--quick', 'fewer sizes and trials (tests)')
    .option('--attn <KEY=VALUE>', ATTN_HELP, attnFlag)
    .action(async (o) => {
      if (o.attn) resolveAttentionOptions(o.attn);
      const { calibrate, formatFits, writeCalibration } = await import('../../hil/calibrate/calibrate.js');
      const bar = progressBar({ label: 'hil calibrate' });
      // a log line clears the bar's line first; the bar redraws at its next update
      const log = (s: string) => {
        if (bar.active) process.stderr.write('\r\x1b[K');
        console.log(s);
      };
      let r;
      try {
        r = await calibrate({ backend: backendOf(o.backend), base: o.base, model: o.model, groupSize: o.groupSize, quick: Boolean(o.quick), fileDir: o.fileDir, ioThreads: o.ioThreads, attention: o.attn, log, onProgress: bar.callback });
      } finally {
        bar.stop();
      }
      writeCalibration(o.out, r);
      console.log(`fits (residual = (fit - measured) / measured):\n${formatFits(r.fits)}`);
      console.log(`wrote ${o.out} (${r.profile.name})`);
    });

  withHilFlags(
    hil
      .command('compare')
      .description('the same trace and policies through the simulator (calibrated profile) and the hardware; per-step errors and a report')
      .requiredOption('--trace <file>', 'attention trace (.kvt)')
      .requiredOption('--policies <list>', 'comma-separated; options after a colon, e.g. full,lru-offload,lru-offload:offload_tier=nvme')
      .requiredOption('--hardware <name|file>', 'the calibrated profile (from "kvtier hil calibrate")')
      .option('--hbm-budget <x>', 'KV budget in HBM', '20%')
      .option('--model <name>', "model preset (default: the trace's model)")
      .option('--group-size <n>', 'quantization group size', intFlag('--group-size', 1), 128)
      .option('--skip-steps <n>', 'first steps left out of the error statistics', intFlag('--skip-steps'), 1)
      .option('--no-file-remeasure', 'simulate NVMe policies with the profile\'s read link as given (default: re-measured right before each one\'s HIL run)')
      .option('--file-remeasure-rounds <n>', 'rounds of executor-pattern read batches per re-measurement', intFlag('--file-remeasure-rounds', 1), 4)
      .option('--repeat <n>', 'HIL runs per policy (1-20); above 1 the measured per-step values are medians over the runs, and each run\'s error and the runs\' spread are reported too', intFlag('--repeat', 1), 1)
      .option('--no-report', 'write compare.json and the run directories only (render later with "kvtier hil report")')
      .requiredOption('--out <dir>', 'output directory'),
  ).action(async (o) => {
    const { compare, formatCompare } = await import('../../hil/compare/compare.js');
    const r = await compare({
      trace: o.trace,
      policies: parsePolicyList(o.policies),
      hbmBudget: o.hbmBudget,
      hardware: o.hardware,
      model: o.model,
      groupSize: o.groupSize,
      out: o.out,
      hil: hilOptions(o),
      skipSteps: o.skipSteps,
      fileRemeasure: o.fileRemeasure,
      fileRemeasureRounds: o.fileRemeasureRounds,
      repeat: o.repeat,
      log: (s) => console.log(s),
    });
    console.log(`per-step latency error (|sim - measured| / measured):\n${formatCompare(r)}`);
    if (o.report) {
      const { renderCompareReport } = await import('../../reports/hil-compare-report.js');
      console.log(`wrote ${await renderCompareReport(o.out)}`);
    }
  });

  registerHilValidate(hil);

  hil
    .command('options')
    .description('the attention options of "hil run", "hil calibrate" and "hil compare" (--attn KEY=VALUE): values and defaults')
    .action(() => {
      console.log(formatAttentionOptions());
    });

  hil
    .command('report')
    .description('render the report page of a "kvtier hil compare" directory from its compare.json')
    .argument('<dir>', 'compare output directory')
    .action(async (dir: string) => {
      const { renderCompareReport } = await import('../../reports/hil-compare-report.js');
      console.log(`wrote ${await renderCompareReport(dir)}`);
    });
}
