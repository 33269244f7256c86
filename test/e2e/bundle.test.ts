/**
 * The bundle of the compiled CLI (cli/bundle.mjs): bin/kvtier.js runs it only while it is at least
 * as new as dist/cli/main.js, and a bundle built from dist/ answers as dist/ does, with the run
 * directory byte for byte the same.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertDistFresh } from '../helpers/dist-fresh.js';
import { generateTrace } from '../../traces/generator.js';

const dir = fs.mkdtempSync(join(tmpdir(), 'kvtier-bundle-'));
// inside dist/ so that its chunks find commander and flechette in node_modules as dist/bundle/ does
const out = resolve(`dist/bundle-test-${process.pid}`);
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(out, { recursive: true, force: true });
});

/** A tree with bin/kvtier.js and stand-ins for dist/cli/main.js and dist/bundle/main.js that print their name. */
function fakeTree(): string {
  const root = fs.mkdtempSync(join(dir, 'tree-'));
  fs.mkdirSync(join(root, 'bin'));
  fs.copyFileSync('bin/kvtier.js', join(root, 'bin/kvtier.js'));
  fs.writeFileSync(join(root, 'package.json'), '{"type":"module"}\n');
  return root;
}

function standIn(root: string, rel: string, secondsAgo: number): void {
  const p = join(root, rel);
  fs.mkdirSync(join(p, '..'), { recursive: true });
  fs.writeFileSync(p, `export async function main() { console.log(${JSON.stringify(rel)}); return 0; }\n`);
  const t = Date.now() / 1000 - secondsAgo;
  fs.utimesSync(p, t, t);
}

const kvtier = (root: string) => spawnSync(process.execPath, [join(root, 'bin/kvtier.js')], { encoding: 'utf8' });

describe('bin/kvtier.js', () => {
  it('runs the bundle while it is at least as new as dist/cli/main.js, else dist/cli/main.js', () => {
    const root = fakeTree();
    expect(kvtier(root).stderr).toMatch(/the compiled CLI is missing/);
    standIn(root, 'dist/cli/main.js', 100);
    expect(kvtier(root).stdout).toBe('dist/cli/main.js\n');
    standIn(root, 'dist/bundle/main.js', 50);
    expect(kvtier(root).stdout).toBe('dist/bundle/main.js\n');
    // tsc ran after the bundle was built
    standIn(root, 'dist/cli/main.js', 10);
    expect(kvtier(root).stdout).toBe('dist/cli/main.js\n');
  });
});

describe('a bundle built from dist/', () => {
  beforeAll(() => {
    assertDistFresh();
    const r = spawnSync(process.execPath, ['cli/bundle.mjs', '--out', out], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  }, 120_000);

  /** `kvtier ARGS` run from `main` (dist/cli/main.js or the bundle's main.js): status, stdout, stderr. */
  function cli(main: string, ...args: string[]) {
    const script = `const { main } = await import(${JSON.stringify(pathToFileURL(main).href)}); process.exitCode = await main(['node', 'kvtier', ...process.argv.slice(1)]);`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script, ...args], { encoding: 'utf8' });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  it('locates files from the compiled modules: each import.meta.url became the URL of a file in dist/', () => {
    for (const f of fs.readdirSync(out).filter((x) => x.endsWith('.js'))) {
      // the `require` that commander's calls to node's built-in modules go through, relative to the chunk itself
      const text = fs.readFileSync(join(out, f), 'utf8').replace(/^import \{ createRequire as __kvtierCreateRequire \} from "node:module"; const require = __kvtierCreateRequire\(import\.meta\.url\);\n/, '');
      const own = [...text.matchAll(/new URL\("([^"]+)", import\.meta\.url\)\.href/g)].map((m) => m[1]);
      expect(text.split('import.meta.url').length - 1, f).toBe(own.length);
      for (const rel of own) expect(relative(resolve('dist'), resolve(out, rel)).startsWith('..'), `${f}: ${rel}`).toBe(false);
      for (const rel of own) expect(fs.existsSync(resolve(out, rel)), `${f}: ${rel}`).toBe(true);
    }
  });

  it('answers --help, policies and hardware as dist/ does', () => {
    for (const args of [['--help'], ['policies'], ['policies', '--json'], ['hardware'], ['no-such-command']]) {
      const bundled = cli(join(out, 'main.js'), ...args);
      expect(bundled, args.join(' ')).toEqual(cli('dist/cli/main.js', ...args));
    }
  });

  it('writes the run directory byte for byte as dist/ does', () => {
    const trace = join(dir, 't.kvt');
    generateTrace(trace, { model: 'llama-3-8b', prompt_tokens: 512, steps: 4, seed: 3 });
    const run = (main: string, name: string) => {
      const r = cli(main, 'run', '--trace', trace, '--policy', 'h2o', '--hbm-budget', '25%', '--out', join(dir, name));
      expect(r.stderr, name).toBe('');
      expect(r.status, name).toBe(0);
      return r.stdout.replace(/ \([0-9.]+ s\)\n$/, '\n').replace(join(dir, name), 'OUT');
    };
    expect(run(join(out, 'main.js'), 'bundled')).toBe(run('dist/cli/main.js', 'dist'));
    const files = fs.readdirSync(join(dir, 'dist')).sort();
    expect(fs.readdirSync(join(dir, 'bundled')).sort()).toEqual(files);
    for (const f of files) expect(fs.readFileSync(join(dir, 'bundled', f)).equals(fs.readFileSync(join(dir, 'dist', f))), f).toBe(true);
  });
});
