#!/usr/bin/env node
// Bundles the compiled CLI (dist/cli/main.js and what it imports from dist/) with esbuild into
// dist/bundle/: main.js and chunks, split at the dynamic imports, so that a command still loads only
// its own group's code, in a few files instead of a hundred. bin/kvtier.js runs the bundle while it
// is at least as new as dist/cli/main.js (built after tsc's last output), else dist/cli/main.js.
//
// Every `import.meta.url` in a bundled module is replaced by the URL of its compiled file in dist/,
// so the modules that locate files from their own URL (the policy catalog, the worker entries, the
// native addon, the code fingerprint) find the same files as when run from dist/.
// Of the npm packages only commander, which every command loads, is bundled in; the others load
// from node_modules as before. commander is CommonJS: its calls to require() node's built-in
// modules go through esbuild's __require helper, so the chunk defining the helper gets a `require`.
// dist/bundle/modules.json lists the modules (paths relative to dist/) in each output file, for the
// tests that check which modules a command loads.
//
//   node cli/bundle.mjs [--dist DIR] [--out DIR]   (defaults: dist/ and dist/bundle/ of this checkout)
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const BUNDLED_PACKAGES = new Set(['commander']);
const REQUIRE_LINE = 'import { createRequire as __kvtierCreateRequire } from "node:module"; const require = __kvtierCreateRequire(import.meta.url);\n';

/** The npm package a bare import names ("@scope/name" or "name"). */
const packageOf = (spec) => spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/');

/** Bundles `dist`/cli/main.js into `outdir`; returns the modules (paths relative to `dist`) in each output file. */
export async function buildBundle(dist, outdir) {
  const entry = path.join(dist, 'cli', 'main.js');
  if (!fs.existsSync(entry)) throw new Error(`${entry} is missing: run "npx tsc -p tsconfig.json" first`);
  const distDir = path.resolve(dist) + path.sep;
  const plugin = {
    name: 'kvtier-bundle',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => (BUNDLED_PACKAGES.has(packageOf(args.path)) ? undefined : { external: true }));
      build.onLoad({ filter: /\.js$/ }, async (args) => {
        if (!args.path.startsWith(distDir)) return undefined;
        const text = await fs.promises.readFile(args.path, 'utf8');
        if (!text.includes('import.meta.url')) return { contents: text, loader: 'js' };
        const rel = path.relative(outdir, args.path).split(path.sep).join('/');
        return { contents: text.replaceAll('import.meta.url', `new URL(${JSON.stringify(rel)}, import.meta.url).href`), loader: 'js' };
      });
    },
  };
  const result = await esbuild.build({
    entryPoints: { main: entry },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    keepNames: true,
    plugins: [plugin],
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  fs.rmSync(outdir, { recursive: true, force: true });
  fs.mkdirSync(outdir, { recursive: true });
  let helper = false;
  for (const f of result.outputFiles) {
    const defines = f.text.includes('var __require = ');
    helper ||= defines;
    fs.writeFileSync(f.path, defines ? REQUIRE_LINE + f.text : f.text);
  }
  if (!helper && result.outputFiles.some((f) => f.text.includes('__require('))) throw new Error('esbuild called __require but defined it in no output file');
  const modules = {};
  for (const [out, meta] of Object.entries(result.metafile.outputs)) {
    const inputs = Object.keys(meta.inputs).map((p) => path.relative(dist, path.resolve(p)).split(path.sep).join('/'));
    modules[path.relative(outdir, path.resolve(out)).split(path.sep).join('/')] = inputs.sort();
  }
  fs.writeFileSync(path.join(outdir, 'modules.json'), `${JSON.stringify(modules, null, 1)}\n`);
  return modules;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? path.resolve(process.argv[i + 1]) : fallback;
  };
  const root = fileURLToPath(new URL('..', import.meta.url));
  const dist = arg('dist', path.join(root, 'dist'));
  const outdir = arg('out', path.join(dist, 'bundle'));
  const t0 = performance.now();
  const modules = await buildBundle(dist, outdir);
  const n = new Set(Object.values(modules).flat()).size;
  console.log(`kvtier bundle: ${n} modules into ${Object.keys(modules).length} files in ${path.relative(process.cwd(), outdir) || '.'} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
}
