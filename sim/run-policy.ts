/**
 * The policy of one simulated run, created from what the simulator knows: the plain-number setup a
 * policy declares (policies/policy.ts) filled from the model, the trace header, the hardware profile
 * and the quality model, with the trace's future steps handed only to a policy that reads the future.
 * Shared by a run (sim/run.ts) and the sweep's dry-run check, so both size HBM the same way.
 */
import { getPolicy, resolveOptions } from '../policies/registry.js';
import type { Policy, PolicyDefinition } from '../policies/policy.js';
import type { TraceHeader, TraceStep } from '../traces/format.js';
import type { HardwareProfile } from './hardware/profile.js';
import { policyHardware } from './hardware/policy-hardware.js';
import type { ModelSpec } from './models/model.js';
import { defaultErrorTable } from './quality/error-table.js';

export interface RunPolicyInput {
  model: ModelSpec;
  header: TraceHeader;
  hardware: HardwareProfile;
  maxBlocks: number;
  budgetBlocks: number;
  /** the trace's steps from the first (a fresh pass per call); read only by an oracle */
  futureSteps: () => Iterable<TraceStep>;
}

export interface RunPolicy {
  definition: PolicyDefinition<any>;
  policy: Policy;
  options: Record<string, unknown>;
}

export function createRunPolicy(name: string, raw: Record<string, unknown>, input: RunPolicyInput): RunPolicy {
  const definition = getPolicy(name);
  const options = resolveOptions(definition, raw);
  const { model, header, hardware, maxBlocks, budgetBlocks } = input;
  const tiers = hardware.tiers.map((t) => t.name);
  const policy = definition.create(options, {
    model,
    header,
    layers: header.layers,
    maxBlocks,
    blockSize: header.block_size,
    budgetBlocks,
    tiers,
    futureSteps: definition.oracle === true ? input.futureSteps : undefined,
    quantRelError: (bits, groupSize, rotation) => defaultErrorTable().relError(bits, groupSize, rotation),
    hardware: policyHardware(hardware, model, tiers, budgetBlocks * header.block_size),
  });
  return { definition, policy, options };
}
