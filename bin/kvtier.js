#!/usr/bin/env node
// Entry point of the `kvtier` command: runs the compiled CLI (npm install builds dist/ via "prepare"):
// the bundle dist/bundle/main.js (cli/bundle.mjs) while it is at least as new as dist/cli/main.js,
// i.e. built from the dist/ there is; else dist/cli/main.js itself (no bundle, or tsc ran since).
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const bundle = fileURLToPath(new URL('../dist/bundle/main.js', import.meta.url));
const built = statSync(entry, { throwIfNoEntry: false });
if (!built) {
  process.stderr.write('kvtier: the compiled CLI is missing (dist/). Run "npm install" or "npm run build" in the kvtier folder.\n');
  process.exit(1);
}
const bundled = statSync(bundle, { throwIfNoEntry: false });
const { main } = await import(bundled && bundled.mtimeMs >= built.mtimeMs ? bundle : entry);
process.exitCode = await main(process.argv);
