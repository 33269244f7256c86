/**
 * The progress bar of long commands: done/total, elapsed time and an ETA, drawn on stderr only when
 * stderr is a terminal (piped or redirected output gets nothing). The layers below the CLI report
 * progress through a plain callback (`ProgressCallback`); the CLI makes one with `progressBar` and
 * hands `bar.callback` down.
 *
 * ETA = elapsed × remaining / done since start: the mean rate of this run so far (items already
 * done when the bar started, e.g. a sweep's reused configurations, do not count towards the rate).
 * Drawing uses cli-progress; redraws are throttled on the bar's own clock, so synchronous work that
 * never yields to the event loop still redraws.
 */
import { createRequire } from 'node:module';
import type * as CliProgress from 'cli-progress';

/** cli-progress is loaded only when a bar is drawn (not for piped output or --help) */
const loadCliProgress = (): typeof CliProgress => createRequire(import.meta.url)('cli-progress') as typeof CliProgress;

/** What the simulator, serving and study layers call: `done` of `total` units, an optional label. */
export type ProgressCallback = (done: number, total: number, label?: string) => void;

export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(chunk: string): boolean;
}

export interface ProgressOptions {
  /** shown before the bar ("sweep", "replay") */
  label: string;
  /** default process.stderr */
  stream?: ProgressStream;
  /** false draws nothing (e.g. --no-progress); default true */
  enabled?: boolean;
  /** clock in ms; default performance.now */
  now?: () => number;
  /** least time between redraws, ms (default 200); the first and last states are always drawn */
  minIntervalMs?: number;
}

export interface ProgressBar {
  /** true when the bar draws (enabled and the stream is a terminal) */
  readonly active: boolean;
  start(total: number, done?: number): void;
  update(done: number, label?: string): void;
  /** one more unit done */
  tick(label?: string): void;
  stop(): void;
  /** the callback form: the first call starts the bar (its `done` is the rate's baseline); follows a changing total */
  readonly callback: ProgressCallback;
}

/** Seconds left at the run's mean rate so far, or null before anything is done. */
export function etaSeconds(elapsedMs: number, doneSinceStart: number, remaining: number): number | null {
  if (!(doneSinceStart > 0) || !(elapsedMs >= 0)) return null;
  return Math.max(0, remaining) * (elapsedMs / 1000 / doneSinceStart);
}

/** 0:07, 1:05:09; "--" for null. */
export function formatDuration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return '--';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

const NOOP: ProgressBar = { active: false, start() {}, update() {}, tick() {}, stop() {}, callback: () => {} };

export function progressBar(opts: ProgressOptions): ProgressBar {
  const stream = opts.stream ?? process.stderr;
  if (opts.enabled === false || stream.isTTY !== true) return NOOP;
  const now = opts.now ?? (() => performance.now());
  const minInterval = opts.minIntervalMs ?? 200;
  const cliProgress = loadCliProgress();
  const bar = new cliProgress.SingleBar(
    {
      format: `${opts.label} [{bar}] {value}/{total} {elapsed_t} ETA {eta_t} {item}`,
      stream: stream as unknown as NodeJS.WritableStream,
      barsize: 24,
      synchronousUpdate: false,
      hideCursor: false,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  let t0 = 0;
  let done0 = 0;
  let done = 0;
  let total = 0;
  let item = '';
  let lastDraw = -Infinity;
  const payload = () => {
    const elapsed = now() - t0;
    return { elapsed_t: formatDuration(elapsed / 1000), eta_t: formatDuration(etaSeconds(elapsed, done - done0, total - done)), item };
  };
  const draw = (force: boolean) => {
    const t = now();
    bar.update(done, payload());
    if (force || t - lastDraw >= minInterval) {
      bar.render();
      lastDraw = t;
    }
  };
  const self: ProgressBar = {
    active: true,
    start(n, d = 0) {
      if (started) bar.stop();
      started = true;
      t0 = now();
      done0 = done = d;
      total = n;
      item = '';
      bar.start(total, done, payload());
      lastDraw = t0;
    },
    update(d, label) {
      if (!started) return;
      done = d;
      if (label !== undefined) item = label;
      draw(done >= total);
    },
    tick(label) {
      self.update(done + 1, label);
    },
    stop() {
      if (!started) return;
      started = false;
      bar.update(done, payload());
      bar.stop();
    },
    callback: (d, n, label) => {
      if (!started) self.start(n, d);
      else if (n !== total) {
        total = n;
        bar.setTotal(n);
      }
      self.update(d, label);
    },
  };
  return self;
}
