/**
 * A validation grid: traces (generated presets at each context, or captured files at their own
 * context) x models x HBM budgets x policies, each cell run N times on the hardware. Expansion order
 * is fixed (context, trace, seed, model, policy, budget; a captured trace after the generated ones
 * at its own context), so cell ids are deterministic and the cheap contexts run first.
 */
export interface GridTrace {
  name: string;
  /** a captured .kvt file (its own context and model) */
  path?: string;
  /** generator settings (preset and overrides); prompt_tokens, steps, model and layers are set per cell */
  generate?: Record<string, unknown>;
  /** models this trace runs with (default: the grid's models for generated traces, the trace's own model for captured ones) */
  models?: string[];
  /** contexts of this generated trace (default: the grid's) */
  contexts?: number[];
  /** labels of the grid's policies this trace runs (default: all of them) */
  policies?: string[];
}

export interface GridPolicy {
  name: string;
  options: Record<string, string>;
  /** name plus option values, unique in the grid */
  label: string;
  /** the full-cache reference: runs once per (trace, context, model) at 100% of the KV */
  full: boolean;
}

export interface ValidateGrid {
  name: string;
  traces: GridTrace[];
  /** prompt contexts (tokens) of the generated traces */
  contexts: number[];
  budgets: string[];
  models: string[];
  policies: GridPolicy[];
  seeds: number[];
  /** the profile calibration starts from (its unmeasured parts are kept) */
  base_hardware: string;
  /** decode steps per trace (generated: the trace's steps; captured: its first steps) */
  steps: number;
  /** HIL runs per cell */
  runs: number;
  /** first steps left out of every statistic (warm-up) */
  skip_steps: number;
  /** calibration with fewer sizes and trials (the contexts are the held-out list either way) */
  calibration: 'full' | 'quick';
}

export interface GridCell {
  index: number;
  id: string;
  trace: GridTrace;
  /** trace file name without extension: <trace>-<model>-<context>-s<seed> (generated) or the file's name */
  trace_id: string;
  seed: number;
  /** prompt context, null for a captured trace (its own) */
  context: number | null;
  model: string;
  policy: GridPolicy;
  budget: string;
}

const slug = (s: string) => s.replace(/\.kvt$/, '').replace(/(\.model)?\.json$/, '').replace(/^.*\//, '').replace(/[^A-Za-z0-9.+-]+/g, '_');

export function contextLabel(c: number | null): string {
  if (c === null) return 'own';
  return c % 1024 === 0 ? `${c / 1024}k` : String(c);
}

/**
 * every cell of the grid, in the fixed order; `ownContext`: a captured trace's prompt length (its
 * place in the order; without it captured traces come last)
 */
export function expandGrid(g: ValidateGrid, ownContext: (t: GridTrace) => number = () => Infinity): GridCell[] {
  const out: GridCell[] = [];
  const slots: { at: number; context: number | null; t: GridTrace }[] = [];
  for (const t of g.traces) {
    if (t.generate) for (const c of t.contexts ?? g.contexts) slots.push({ at: c, context: c, t });
    else slots.push({ at: ownContext(t), context: null, t });
  }
  // by context; at one context the generated traces first; else in the grid's order (a stable sort)
  slots.sort((a, b) => a.at - b.at || Number(a.context === null) - Number(b.context === null));
  for (const { context, t } of slots) {
    const generated = t.generate !== undefined;
    for (const seed of generated ? g.seeds : [g.seeds[0]]) {
      const models = t.models ?? (generated ? g.models : ['']);
      for (const model of models) {
        const trace_id = generated ? `${slug(t.name)}-${slug(model)}-${contextLabel(context)}-s${seed}` : slug(t.name);
        for (const policy of g.policies) {
          if (t.policies && !t.policies.includes(policy.label)) continue;
          for (const budget of policy.full ? ['100%'] : g.budgets) {
            const index = out.length;
            const id = [String(index).padStart(4, '0'), trace_id, generated ? null : model ? slug(model) : null, policy.label, budget.replace('%', 'pct')].filter(Boolean).join('_');
            out.push({ index, id, trace: t, trace_id, seed, context, model, policy, budget });
          }
        }
      }
    }
  }
  return out;
}
