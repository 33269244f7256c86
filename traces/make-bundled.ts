/**
 * Write the bundled quickstart traces (bundled-traces.ts) into traces/bundled/, or into the folder
 * given as the first argument. Deterministic: running it again gives byte-identical files.
 *
 *   npx tsx traces/make-bundled.ts [out-dir]
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BUNDLED_TRACES } from './bundled-traces.js';
import { generateTrace } from './generator.js';

export function makeBundled(outDir: string): { file: string; bytes: number }[] {
  fs.mkdirSync(outDir, { recursive: true });
  return BUNDLED_TRACES.map((t) => {
    const file = path.join(outDir, t.file);
    return { file, bytes: generateTrace(file, t.input, { overwrite: true }).bytes };
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const outDir = process.argv[2] ?? fileURLToPath(new URL('./bundled/', import.meta.url));
  let total = 0;
  for (const { file, bytes } of makeBundled(outDir)) {
    total += bytes;
    console.log(`${file}: ${(bytes / 1e6).toFixed(2)} MB`);
  }
  console.log(`total ${(total / 1e6).toFixed(2)} MB`);
}
