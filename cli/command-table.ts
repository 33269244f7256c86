/**
 * The command groups of the kvtier command line, each loaded only when one of its commands runs.
 * `name`, `term` and `description` of every top-level command are repeated here so that the root
 * help and the unknown-command message need none of the groups' modules (and their dependencies:
 * the simulator, vega, arquero, piscina...). test/cli/command-table.test.ts checks that they match
 * what each group registers.
 */
import { Help, type Command } from 'commander';

export interface CommandStub {
  name: string;
  /** The command as the root help lists it: name, "[options]" when it has any, then its arguments. */
  term: string;
  description: string;
}

export interface CommandGroup {
  /** The top-level commands the group registers, in registration order. */
  commands: CommandStub[];
  load(): Promise<(program: Command) => void>;
}

export const COMMAND_GROUPS: CommandGroup[] = [
  {
    commands: [{ name: 'trace', term: 'trace', description: 'attention traces: generate, inspect, validate' }],
    load: async () => (await import('./commands/trace.js')).registerTrace,
  },
  {
    commands: [{ name: 'run', term: 'run [options]', description: 'replay an attention trace against a policy on simulated tiered memory' }],
    load: async () => (await import('./commands/run.js')).registerRun,
  },
  {
    commands: [
      {
        name: 'serve',
        term: 'serve [options] [mode]',
        description:
          'serving-level replay of a request trace (continuous batching, prefix KV cache over tiers, backpressure); mode "curve": prefix hit ratio vs cache capacity; mode "policies": list cache policies',
      },
    ],
    load: async () => (await import('./commands/serve.js')).registerServe,
  },
  {
    commands: [
      {
        name: 'sweep',
        term: 'sweep',
        description: 'run a grid of configurations (JSON or YAML) in parallel and write results + a report; "sweep merge" combines shards',
      },
      { name: 'report', term: 'report [options] <dir>', description: '(re)write the report page of a sweep directory' },
    ],
    load: async () => (await import('./commands/sweep.js')).registerSweep,
  },
  {
    commands: [
      { name: 'policies', term: 'policies [options]', description: 'list the registered policies with their options and sources' },
      { name: 'hardware', term: 'hardware', description: 'hardware presets' },
      { name: 'models', term: 'models', description: 'list model presets with KV bytes per token' },
    ],
    load: async () => (await import('./commands/catalog.js')).registerCatalog,
  },
  {
    commands: [{ name: 'hil', term: 'hil', description: 'hardware-in-the-loop: real memory, real kernels' }],
    load: async () => (await import('./commands/hil.js')).registerHil,
  },
  {
    commands: [
      {
        name: 'readiness',
        term: 'readiness [options]',
        description:
          "the seed systems' readiness suite in the simulator (memory tsunami, precision decay, stutter-free, needle) for each policy on the checks its design claims; one report",
      },
    ],
    load: async () => (await import('./commands/readiness.js')).registerReadiness,
  },
];

/** The group that registers the top-level command `name`, if any. */
export function groupOf(name: string): CommandGroup | undefined {
  return COMMAND_GROUPS.find((g) => g.commands.some((c) => c.name === name));
}

/**
 * The top-level command an argument list asks for: its first word that is not an option, or for
 * `help <command>` the word after "help". Undefined when there is none (`kvtier --help`).
 */
export function requestedCommand(args: string[]): string | undefined {
  const words = args.filter((a) => !a.startsWith('-'));
  return words[0] === 'help' ? words[1] : words[0];
}

/**
 * Every top-level command as a stub with its description and no action, listed in the root help
 * exactly as the full commands are; for the root help and for a word that names no command.
 */
export function registerStubs(program: Command): void {
  const terms = new Map<string, string>();
  for (const g of COMMAND_GROUPS) {
    for (const c of g.commands) {
      program.command(c.name).description(c.description);
      terms.set(c.name, c.term);
    }
  }
  const plain = new Help();
  program.configureHelp({ subcommandTerm: (cmd) => terms.get(cmd.name()) ?? plain.subcommandTerm(cmd) });
}
