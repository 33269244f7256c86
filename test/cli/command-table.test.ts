/**
 * The lazily loaded command line (cli/main.ts) against the full one (cli/program.ts): the stubs in
 * cli/command-table.ts list every top-level command exactly as its group registers it, the root
 * help is the same text, and an argument list loads only the group of the command it names.
 */
import { Help } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMAND_GROUPS, requestedCommand } from '../../cli/command-table.js';
import { programFor } from '../../cli/main.js';
import { buildProgram, REGISTER_GROUPS } from '../../cli/program.js';
import { rootProgram } from '../../cli/root-program.js';

const help = new Help();
const listed = (p: ReturnType<typeof rootProgram>) =>
  p.commands.map((c) => ({ name: c.name(), term: help.subcommandTerm(c), description: c.description() }));

describe('command table', () => {
  it('has one group per registration function of the full program, in its order', () => {
    expect(COMMAND_GROUPS).toHaveLength(REGISTER_GROUPS.length);
  });

  it.each(COMMAND_GROUPS.map((g, i) => [g.commands.map((c) => c.name).join(', '), i] as const))(
    'stubs of %s match what the group registers (update cli/command-table.ts when a command changes)',
    async (_names, i) => {
      const direct = rootProgram();
      REGISTER_GROUPS[i](direct);
      const lazy = rootProgram();
      (await COMMAND_GROUPS[i].load())(lazy);
      expect(listed(lazy)).toEqual(listed(direct));
      expect(listed(direct)).toEqual(COMMAND_GROUPS[i].commands);
    },
  );

  it('gives the root help of the full program without loading any group', async () => {
    const full = buildProgram().helpInformation();
    expect(full).toContain('policies [options]');
    expect((await programFor([])).helpInformation()).toBe(full);
    expect((await programFor(['--help'])).helpInformation()).toBe(full);
    expect((await programFor(['no-such-command'])).commands.map((c) => c.name())).toEqual(buildProgram().commands.map((c) => c.name()));
  });

  it('loads only the group of the command named', async () => {
    expect((await programFor(['run', '--trace', 'x.kvt'])).commands.map((c) => c.name())).toEqual(['run']);
    expect((await programFor(['help', 'models'])).commands.map((c) => c.name())).toEqual(['policies', 'hardware', 'models']);
    expect((await programFor(['report', 'dir'])).commands.map((c) => c.name())).toEqual(['sweep', 'report']);
  });

  it('finds the command word after options and after "help"', () => {
    expect(requestedCommand([])).toBeUndefined();
    expect(requestedCommand(['--help'])).toBeUndefined();
    expect(requestedCommand(['help'])).toBeUndefined();
    expect(requestedCommand(['help', 'run'])).toBe('run');
    expect(requestedCommand(['-h', 'trace', 'gen'])).toBe('trace');
    expect(requestedCommand(['sweep', 'merge', '--out', 'x'])).toBe('sweep');
  });
});
