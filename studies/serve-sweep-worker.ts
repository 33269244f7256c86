/** Piscina worker for serving sweeps: one configuration per call. */
import { runServeConfig, type ServeSweepRow } from './serve-sweep.js';
import type { ServeSweepConfig, ServeSweepSpec } from './serve-sweep-spec.js';

export default function run(task: { spec: ServeSweepSpec; config: ServeSweepConfig; dir: string }): ServeSweepRow {
  return runServeConfig(task.spec, task.config, task.dir);
}
