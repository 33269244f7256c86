/**
 * Fit the seeded generator's parameters to a trace's statistics: a deterministic coordinate
 * search (each parameter stepped up and down in its own transformed space; a step that lowers
 * the loss is kept; when a whole pass keeps none, the steps halve). The generator is seeded, so
 * the loss is a deterministic function of the parameters and the search needs no restarts.
 */
import { generateSteps } from '../generator.js';
import type { GeneratorInput } from '../generator-params.js';
import { resolveGeneratorParams } from '../generator-params.js';
import { computeTraceStats } from '../trace-stats.js';
import { statLoss, statTable, type StatTable } from './stat-targets.js';

export interface FitParam {
  name: string;
  min: number;
  max: number;
  /** 'log' steps multiply, 'lin' steps add */
  space: 'lin' | 'log';
  integer?: boolean;
  /** the first step, in the parameter's space (a share of the range for 'lin', a log-ratio for 'log') */
  step: number;
}

/** The parameters fitted by default; shape (layers, prompt, block size) comes from the target. */
export const FIT_PARAMS: readonly FitParam[] = [
  { name: 'sink_mass', min: 0, max: 0.9, space: 'lin', step: 0.1 },
  { name: 'concentration_low', min: 0.01, max: 0.99, space: 'lin', step: 0.15 },
  { name: 'concentration_high', min: 0.05, max: 0.995, space: 'lin', step: 0.1 },
  { name: 'concentration_layers', min: 0.2, max: 30, space: 'log', step: 0.7 },
  { name: 'window_share', min: 0, max: 1, space: 'lin', step: 0.15 },
  { name: 'window_decay_tokens', min: 1, max: 1024, space: 'log', step: 0.7 },
  { name: 'hh_count', min: 1, max: 512, space: 'log', step: 0.7, integer: true },
  { name: 'zipf_alpha', min: 0.1, max: 4, space: 'lin', step: 0.1 },
  { name: 'persistence', min: 0.3, max: 0.995, space: 'lin', step: 0.1 },
  { name: 'background_sigma', min: 0, max: 4, space: 'lin', step: 0.1 },
  { name: 'hh_jitter', min: 0, max: 2, space: 'lin', step: 0.1 },
];

export interface FitShape {
  layers: number;
  kv_groups: number;
  block_size: number;
  prompt_tokens: number;
  topk: number;
}

export interface FitOptions {
  steps?: number;
  seed?: number;
  maxEvals?: number;
  params?: readonly FitParam[];
  /** starting values (default: the generator's defaults, or the preset's) */
  start?: Record<string, number>;
  /** fixed extra inputs (e.g. a needle) */
  fixed?: GeneratorInput;
  log?: (line: string) => void;
}

export interface FitResult {
  params: Record<string, number>;
  loss: number;
  startLoss: number;
  evals: number;
  stats: StatTable;
}

export function generatedStats(shape: FitShape, values: GeneratorInput, steps: number, seed: number): StatTable {
  const input: GeneratorInput = { ...values, ...shape, steps, seed, encoding: 'topk', model: 'fit' };
  return statTable(computeTraceStats(generateSteps(input), { kvGroups: shape.kv_groups, blockSize: shape.block_size }));
}

export function fitGenerator(target: StatTable, shape: FitShape, o: FitOptions = {}): FitResult {
  const steps = o.steps ?? 64;
  const seed = o.seed ?? 1;
  const maxEvals = o.maxEvals ?? 400;
  const specs = o.params ?? FIT_PARAMS;
  const defaults = resolveGeneratorParams({ ...(o.fixed ?? {}), ...shape }) as unknown as Record<string, number>;
  const x: Record<string, number> = {};
  for (const p of specs) x[p.name] = o.start?.[p.name] ?? defaults[p.name]!;
  let evals = 0;
  const lossOf = (v: Record<string, number>): { loss: number; stats: StatTable } => {
    evals++;
    try {
      const stats = generatedStats(shape, { ...(o.fixed ?? {}), ...v } as GeneratorInput, steps, seed);
      return { loss: statLoss(stats, target), stats };
    } catch {
      return { loss: Infinity, stats: [] }; // a parameter set the generator refuses
    }
  };
  let best = lossOf(x);
  const startLoss = best.loss;
  const step = specs.map((p) => p.step);
  const move = (p: FitParam, v: number, s: number, dir: number): number => {
    let n = p.space === 'log' ? Math.max(v, 1e-3) * Math.exp(dir * s) : v + dir * s * (p.max - p.min);
    if (p.integer) n = Math.round(n) === Math.round(v) ? Math.round(v) + dir : Math.round(n);
    return Math.min(p.max, Math.max(p.min, n));
  };
  while (evals < maxEvals && step.some((s) => s > 0.01)) {
    let improved = false;
    for (let i = 0; i < specs.length && evals < maxEvals; i++) {
      const p = specs[i]!;
      for (const dir of [1, -1]) {
        const v = move(p, x[p.name]!, step[i]!, dir);
        if (v === x[p.name]) continue;
        const trial = lossOf({ ...x, [p.name]: v });
        if (trial.loss < best.loss - 1e-9) {
          x[p.name] = v;
          best = trial;
          improved = true;
          break;
        }
      }
    }
    if (!improved) for (let i = 0; i < step.length; i++) step[i] = step[i]! / 2;
    o.log?.(`evals ${evals}: loss ${best.loss.toFixed(2)}`);
  }
  return { params: x, loss: best.loss, startLoss, evals, stats: best.stats };
}
