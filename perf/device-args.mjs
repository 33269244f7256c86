// Command-line options shared by the device scripts (plain node, no npm on the GPU machine):
// --dist DIR (compiled JS), --out DIR, --name VALUE; load(p) imports a module from the dist folder.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export function deviceArgs(defaultOut) {
  const args = process.argv.slice(2);
  const opt = (name, fallback) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : fallback;
  };
  const dist = resolve(opt('dist', 'dist'));
  const out = resolve(opt('out', process.env.OUT ?? defaultOut));
  const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
  return { args, opt, dist, out, load };
}
