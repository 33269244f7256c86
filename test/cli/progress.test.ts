import { describe, expect, it } from 'vitest';
import { etaSeconds, formatDuration, progressBar, type ProgressStream } from '../../cli/progress.js';

class FakeStream implements ProgressStream {
  chunks: string[] = [];
  columns = 200;
  constructor(readonly isTTY: boolean) {}
  write(s: string): boolean {
    this.chunks.push(s);
    return true;
  }
  /** the drawn lines: control sequences removed */
  get text(): string {
    // eslint-disable-next-line no-control-regex
    return this.chunks.join('').replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
  }
}

describe('progress helper', () => {
  it('computes the ETA from the mean rate since start', () => {
    expect(etaSeconds(3000, 3, 7)).toBe(7); // 1 s per unit, 7 left
    expect(etaSeconds(4000, 2, 6)).toBe(12); // 2 s per unit
    expect(etaSeconds(1000, 0, 5)).toBeNull();
    expect(formatDuration(7)).toBe('0:07');
    expect(formatDuration(65.4)).toBe('1:05');
    expect(formatDuration(3909)).toBe('1:05:09');
    expect(formatDuration(null)).toBe('--');
  });

  it('writes nothing when the stream is not a terminal', () => {
    const s = new FakeStream(false);
    const bar = progressBar({ label: 'sweep', stream: s, now: () => 0 });
    expect(bar.active).toBe(false);
    bar.start(10);
    bar.tick('a');
    bar.callback(5, 10, 'b');
    bar.stop();
    expect(s.chunks).toEqual([]);
  });

  it('writes nothing when disabled on a terminal', () => {
    const s = new FakeStream(true);
    const bar = progressBar({ label: 'sweep', stream: s, enabled: false });
    bar.callback(1, 2);
    bar.stop();
    expect(s.chunks).toEqual([]);
  });

  it('draws done/total, elapsed and ETA on a fake clock', () => {
    const s = new FakeStream(true);
    let t = 0;
    const bar = progressBar({ label: 'sweep', stream: s, now: () => t, minIntervalMs: 0 });
    expect(bar.active).toBe(true);
    bar.start(10, 2); // two reused: they do not count towards the rate
    expect(s.text).toContain('sweep [');
    expect(s.text).toContain('2/10 0:00 ETA --');
    t = 4000;
    bar.update(4, 'cfg-4'); // 2 done in 4 s: 2 s each, 6 left -> 12 s
    expect(s.text).toContain('4/10 0:04 ETA 0:12 cfg-4');
    t = 10_000;
    bar.tick('cfg-5'); // 3 in 10 s, 5 left -> 16.7 s
    expect(s.text).toContain('5/10 0:10 ETA 0:17 cfg-5');
    bar.stop();
    expect(s.text.endsWith('\n')).toBe(true);
  });

  it('throttles redraws on its clock but always draws the last state', () => {
    const s = new FakeStream(true);
    let t = 0;
    const bar = progressBar({ label: 'replay', stream: s, now: () => t, minIntervalMs: 1000 });
    bar.callback(0, 4);
    t = 10;
    bar.callback(1, 4, 'x');
    expect(s.text).not.toContain('1/4');
    t = 20;
    bar.callback(4, 4, 'y'); // the end is drawn at once
    expect(s.text).toContain('4/4 0:00 ETA 0:00 y');
    bar.stop();
  });

  it('follows a total that grows (the callback form)', () => {
    const s = new FakeStream(true);
    let t = 0;
    const bar = progressBar({ label: 'replay', stream: s, now: () => t, minIntervalMs: 0 });
    bar.callback(0, 4);
    t = 1000;
    bar.callback(1, 8, 'step 1'); // 1 s per unit, 7 left
    expect(s.text).toContain('1/8 0:01 ETA 0:07 step 1');
    bar.stop();
  });
});
