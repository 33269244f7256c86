/**
 * The kvtier command line. Only the command group that the arguments name is loaded (with its
 * dependencies); the root help and an unknown command use stubs from cli/command-table.ts.
 */
import type { Command } from 'commander';
import { quietOnClosedPipe } from './closed-pipe.js';
import { groupOf, registerStubs, requestedCommand } from './command-table.js';
import { rootProgram } from './root-program.js';

/** The program for one argument list (argv without node and the script): the named command's group, or stubs of all. */
export async function programFor(args: string[]): Promise<Command> {
  const program = rootProgram();
  const name = requestedCommand(args);
  const group = name === undefined ? undefined : groupOf(name);
  if (group) (await group.load())(program);
  else registerStubs(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  quietOnClosedPipe();
  try {
    const program = await programFor(argv.slice(2));
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    const err = e as Error & { code?: string; exitCode?: number };
    if (err.code?.startsWith('commander.')) return err.exitCode ?? 1;
    process.stderr.write(`kvtier: error: ${err.message}\n`);
    if (process.env.KVTIER_DEBUG) process.stderr.write(`${err.stack}\n`);
    return 1;
  }
}
