/**
 * Golden files (STYLE.md #11): a value is compared, as pretty JSON, with the stored file
 * test/reports/golden/<name> (written as renderChart writes .vl.json files). `UPDATE_GOLDEN=1 npx vitest run test/reports` rewrites the files;
 * otherwise any difference fails the test, and a missing file fails with that hint.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { prettyJson } from '../../reports/pretty-json.js';

export const GOLDEN_DIR = join(dirname(fileURLToPath(import.meta.url)), 'golden');

/** The same text renderChart writes to a .vl.json file. */
export function goldenText(value: unknown): string {
  return prettyJson(value);
}

export function expectGolden(name: string, value: unknown): void {
  const path = join(GOLDEN_DIR, name);
  const actual = goldenText(value);
  if (process.env['UPDATE_GOLDEN'] === '1') {
    mkdirSync(GOLDEN_DIR, { recursive: true });
    writeFileSync(path, actual);
    return;
  }
  if (!existsSync(path)) {
    throw new Error(`golden file ${path} is missing; create it with UPDATE_GOLDEN=1 npx vitest run test/reports`);
  }
  const expected = readFileSync(path, 'utf8');
  // parse both so that the diff vitest prints is structural, then compare the text exactly
  expect(JSON.parse(actual), `spec differs from golden ${name} (UPDATE_GOLDEN=1 to accept)`).toEqual(JSON.parse(expected));
  expect(actual, `formatting differs from golden ${name}`).toBe(expected);
}
