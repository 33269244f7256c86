/**
 * `kvtier readiness`: the seed systems' readiness suite (memory tsunami, precision decay,
 * stutter-free masking, needle retention) in the simulator, for each policy on the checks its
 * design claims; writes one report (index.html + readiness.json) to --out.
 */
import type { Command } from 'commander';
import { argParser, intFlag } from '../parse-pairs.js';
import { progressBar } from '../progress.js';
import { checkOutDir, writeDirAtomically } from '../../sim/output-dir.js';
import { DEFAULT_POLICIES, parsePolicies } from '../../studies/readiness/claims.js';
import { writeReadinessReport, verdictTable } from '../../reports/readiness-report.js';
import { DEFAULT_SETTINGS, checkSettings, runReadiness, type Progress, type ReadinessSettings } from '../../studies/readiness/run-readiness.js';
import { CHECKS } from '../../studies/readiness/claims.js';

const intArg = (name: string, min: number) => argParser(intFlag(name, min));

interface ReadinessFlags {
  policies: string;
  model: string;
  hardware: string;
  requests: number;
  context: number;
  steps: number;
  needleSteps: number;
  budget: string;
  seed: number;
  out: string;
  force?: boolean;
  progress: boolean;
}

/** The bar with ETA on a terminal; nothing when piped or with --no-progress. */
function readinessProgress(enabled: boolean): Progress | undefined {
  const bar = progressBar({ label: 'readiness', enabled });
  return bar.active ? bar : undefined;
}

export function registerReadiness(program: Command): void {
  const d = DEFAULT_SETTINGS;
  program
    .command('readiness')
    .description('the seed systems\' readiness suite in the simulator (memory tsunami, precision decay, stutter-free, needle) for each policy on the checks its design claims; one report')
    .option('--policies <list>', `comma-separated seed policies (${DEFAULT_POLICIES.join(', ')})`, argParser((v) => parsePolicies(v).join(',')), DEFAULT_POLICIES.join(','))
    .option('--model <name>', 'model preset or JSON file (the generated traces take its layers)', d.model)
    .option('--hardware <name>', 'hardware preset or profile JSON', d.hardware)
    .option('--requests <n>', 'tsunami: concurrent requests (the check asks for >= 50)', intArg('--requests', 1), d.requests)
    .option('--context <tokens>', 'prompt tokens of every generated trace', intArg('--context', 16), d.context)
    .option('--steps <n>', 'decode steps of each tsunami request and of the probe run', intArg('--steps', 1), d.steps)
    .option('--needle-steps <n>', 'decode steps of the needle trace (needle hot from 3/8 of them for 1/4 of them)', intArg('--needle-steps', 8), d.needle_steps)
    .option('--budget <share|size>', 'HBM budget of the tsunami and probe runs ("25%", 0.25 or "4GiB"); the needle runs at 50%', d.budget)
    .option('--seed <n>', 'seed of the first generated trace (request i uses seed + i)', intArg('--seed', 0), d.seed)
    .requiredOption('--out <dir>', 'report directory (index.html, readiness.json)')
    .option('--force', 'replace --out if it exists')
    .option('--no-progress', 'no progress bar')
    .action((f: ReadinessFlags) => {
      const settings: ReadinessSettings = {
        policies: parsePolicies(f.policies),
        model: f.model,
        hardware: f.hardware,
        requests: f.requests,
        context: f.context,
        steps: f.steps,
        needle_steps: f.needleSteps,
        budget: f.budget,
        seed: f.seed,
      };
      checkSettings(settings);
      checkOutDir(f.out, Boolean(f.force));
      const result = runReadiness(settings, readinessProgress(f.progress));
      writeDirAtomically(f.out, Boolean(f.force), (tmp) => writeReadinessReport(tmp, result));
      const rows = verdictTable(result);
      const w = Math.max(...rows.map((r) => r.policy.length), 6);
      process.stdout.write(`${'policy'.padEnd(w)}  ${CHECKS.map((c) => c.padEnd(11)).join(' ')}\n`);
      for (const r of rows) process.stdout.write(`${r.policy.padEnd(w)}  ${CHECKS.map((c) => r.cells[c].padEnd(11)).join(' ')}\n`);
      process.stdout.write(`wrote ${f.out}/index.html and ${f.out}/readiness.json\n`);
    });
}
