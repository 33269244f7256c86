/** The whole kvtier command line, every command group registered (for the docs and the tests; `kvtier` itself loads only the group it runs, see main.ts). */
import type { Command } from 'commander';
import { registerCatalog } from './commands/catalog.js';
import { registerHil } from './commands/hil.js';
import { registerReadiness } from './commands/readiness.js';
import { registerRun } from './commands/run.js';
import { registerServe } from './commands/serve.js';
import { registerSweep } from './commands/sweep.js';
import { registerTrace } from './commands/trace.js';
import { rootProgram } from './root-program.js';

/** The registration functions in the order of COMMAND_GROUPS (cli/command-table.ts). */
export const REGISTER_GROUPS: ((program: Command) => void)[] = [
  registerTrace,
  registerRun,
  registerServe,
  registerSweep,
  registerCatalog,
  registerHil,
  registerReadiness,
];

export function buildProgram(): Command {
  const program = rootProgram();
  for (const register of REGISTER_GROUPS) register(program);
  return program;
}
