/**
 * Progress bars are drawn only on a terminal: with stderr piped (CI, a log file) the long commands
 * write no bar and no cursor control (the sweep's piped output: test/e2e/sweep.test.ts). The bar itself is
 * tested in test/cli/progress.test.ts.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateTrace } from '../../traces/generator.js';
import { kvtierArgs } from '../helpers/kvtier-from-sources.js';

const dir = fs.mkdtempSync(join(tmpdir(), 'kvtier-progress-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const kvtier = (...args: string[]) => spawnSync(process.execPath, kvtierArgs(...args), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

// what a drawn bar writes: escape sequences and the bar's block characters
// eslint-disable-next-line no-control-regex
const BAR = /\x1b\[|[█░]|ETA/;

describe('progress with piped output', () => {
  it('kvtier run (an oracle: look-ahead and replay) writes no bar', () => {
    const trace = join(dir, 'gen.kvt');
    generateTrace(trace, { prompt_tokens: 512, steps: 12, seed: 1 } as never);
    const r = kvtier('run', '--trace', trace, '--policy', 'oracle', '--hbm-budget', '20%', '--out', join(dir, 'run'));
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(BAR);
    expect(r.stdout).not.toMatch(BAR);
    expect(r.stdout).toMatch(/^oracle on h100-pcie5/);
  });
});
