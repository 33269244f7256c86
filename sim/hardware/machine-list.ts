import { FieldChecks, isPlainObject } from './field-checks.js';
import { ValidationError } from './validation-error.js';

/** One machine of presets/machines.json: a GPU part plus host tier parts, in tier order. */
export interface MachineEntry {
  description: string;
  gpu: string;
  tiers: string[];
}

/** Checks machines.json: each entry's fields, and that its parts exist among the given names. */
export function validateMachineList(
  value: unknown,
  source: string,
  gpuNames: readonly string[],
  tierNames: readonly string[],
): Record<string, MachineEntry> {
  const checks = new FieldChecks();
  if (!isPlainObject(value)) {
    checks.add('the top level must be an object of machine name -> { description, gpu, tiers }');
  } else {
    for (const [name, entry] of Object.entries(value)) {
      const path = `["${name}"]`;
      const e = checks.object(entry, path, ['description', 'gpu', 'tiers']);
      if (!e) continue;
      checks.string(e, 'description', path, true);
      checks.oneOf(e, 'gpu', path, gpuNames);
      const tiers = checks.array(e, 'tiers', path, true);
      tiers?.forEach((t, i) => {
        if (typeof t !== 'string' || !tierNames.includes(t)) {
          checks.add(`${path}.tiers[${i}] must be one of ${tierNames.join(', ')} (got ${JSON.stringify(t)})`);
        }
      });
    }
  }
  if (checks.problems.length > 0) throw new ValidationError(source, checks.problems);
  return value as Record<string, MachineEntry>;
}
