/** The kvtier command line. Each command group registers itself from cli/commands/. */
import { Command } from 'commander';
import { quietOnClosedPipe } from './closed-pipe.js';
import { registerCatalog } from './commands/catalog.js';
import { registerHil } from './commands/hil.js';
import { registerReadiness } from './commands/readiness.js';
import { registerRun } from './commands/run.js';
import { registerServe } from './commands/serve.js';
import { registerSweep } from './commands/sweep.js';
import { registerTrace } from './commands/trace.js';

export function buildProgram(): Command {
  const program = new Command();
  program
    .name('kvtier')
    .description('Tiered KV-cache simulator for long-context LLM inference (HBM, DRAM, CXL, NVMe), with hardware in the loop')
    .version('0.1.0')
    .showHelpAfterError()
    .exitOverride();
  registerTrace(program);
  registerRun(program);
  registerServe(program);
  registerSweep(program);
  registerCatalog(program);
  registerHil(program);
  registerReadiness(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  quietOnClosedPipe();
  try {
    await buildProgram().parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    const err = e as Error & { code?: string; exitCode?: number };
    if (err.code?.startsWith('commander.')) return err.exitCode ?? 1;
    process.stderr.write(`kvtier: error: ${err.message}\n`);
    if (process.env.KVTIER_DEBUG) process.stderr.write(`${err.stack}\n`);
    return 1;
  }
}
