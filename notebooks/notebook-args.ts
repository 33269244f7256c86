/** What the notebooks share: their flags (node:util parseArgs, strict) and running as a script. */
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Parse `args` against string flags with defaults; an unknown flag or a stray argument throws, naming the notebook and its flags. */
export function notebookFlags<K extends string>(notebook: string, args: string[], defaults: Record<K, string>): Record<K, string> {
  const options: Options = {};
  for (const k of Object.keys(defaults)) options[k] = { type: 'string', default: defaults[k as K] };
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values as Record<K, string>;
  } catch (e) {
    const flags = Object.entries(defaults).map(([k, v]) => `--${k} (default ${v})`).join(', ');
    throw new Error(`${notebook}: ${(e as Error).message}; flags: ${flags}`);
  }
}

/** A flag's value as an integer >= min, or an error naming the notebook, the flag and the value. */
export function intFlag(notebook: string, name: string, value: string, min: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min) throw new Error(`${notebook}: --${name} must be an integer >= ${min} (got "${value}")`);
  return n;
}

/** True when the module at `url` is the script node was started with (not imported by a test). */
export function isMain(url: string): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return pathToFileURL(realpathSync(script)).href === url;
  } catch {
    return false;
  }
}

/** Run a notebook's main as a script: its errors as one line on stderr and exit status 1. */
export function runAsScript(main: (args: string[]) => Promise<unknown>): void {
  main(process.argv.slice(2)).catch((e: Error) => {
    process.stderr.write(`${e.message}\n`);
    process.exitCode = 1;
  });
}
