/**
 * One simulated run with the built-in policies registered (simulate-core.ts has the run itself).
 */
import { registerBuiltinPolicies } from '../policies/builtin.js';
import { simulateRegistered, type RunConfig, type RunResult, type SimulateOptions } from './simulate-core.js';

export * from './simulate-core.js';

export function simulate(config: RunConfig, opts: SimulateOptions = {}): RunResult {
  registerBuiltinPolicies();
  return simulateRegistered(config, opts);
}
