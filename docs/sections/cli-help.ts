/** The `cli` section: every command's help, from the commander program of cli/. */
import type { Command } from 'commander';
import { buildProgram } from '../../cli/program.js';
import { GENERATED_BY } from './markdown.js';

/** Help text wraps at this width whatever the terminal is, so the pages are the same everywhere. */
const HELP_WIDTH = 100;

function isHelpCommand(c: Command): boolean {
  return c.name() === 'help' && c.description() === 'display help for command';
}

/** Every command of the program, depth first in registration order, with its full name. */
export function commandsOf(program: Command): { path: string; command: Command }[] {
  const out: { path: string; command: Command }[] = [];
  const walk = (c: Command, path: string) => {
    c.configureHelp({ helpWidth: HELP_WIDTH });
    out.push({ path, command: c });
    for (const s of c.commands) if (!isHelpCommand(s)) walk(s, `${path} ${s.name()}`);
  };
  walk(program, program.name());
  return out;
}

export function cliSection(): string {
  const cmds = commandsOf(buildProgram());
  const parts = [GENERATED_BY('the commander program in cli/ (`kvtier <command> --help`)'), ''];
  parts.push('Commands:', '');
  for (const { path, command } of cmds.slice(1)) {
    parts.push(`- [\`${path}\`](#${path.replace(/ /g, '-')}) — ${command.description().split('\n')[0]}`);
  }
  for (const { path, command } of cmds) {
    parts.push('', `### ${path}`, '', '```text', command.helpInformation().trimEnd(), '```');
  }
  return parts.join('\n');
}
