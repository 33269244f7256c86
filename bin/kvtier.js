#!/usr/bin/env node
// Entry point of the `kvtier` command: runs the compiled CLI (npm install builds dist/ via "prepare").
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
if (!existsSync(entry)) {
  process.stderr.write('kvtier: the compiled CLI is missing (dist/). Run "npm install" or "npm run build" in the kvtier folder.\n');
  process.exit(1);
}
const { main } = await import(entry);
process.exitCode = await main(process.argv);
