import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { composeMachine } from './compose-machine.js';
import { validateGpuPreset, type GpuPreset } from './gpu-preset.js';
import { validateMachineList, type MachineEntry } from './machine-list.js';
import { GPU_PRESET_FILES, MACHINES_FILE, PRESET_DIR, TIER_PRESET_FILES } from './preset-registry.js';
import type { HardwareProfile } from './profile.js';
import { readJsonFile } from './read-json-file.js';
import { validateTierPreset, type HostTierPreset } from './tier-preset.js';
import { validateProfile } from './validate-profile.js';

// Parts are validated on first use, so one broken file never breaks importing this module.
let machineList: Record<string, MachineEntry> | undefined;
const gpuParts = new Map<string, GpuPreset>();
const tierParts = new Map<string, HostTierPreset>();

function machines(): Record<string, MachineEntry> {
  machineList ??= validateMachineList(
    MACHINES_FILE,
    `${PRESET_DIR}/machines.json`,
    Object.keys(GPU_PRESET_FILES),
    Object.keys(TIER_PRESET_FILES),
  );
  return machineList;
}

/** A validated GPU part by file name (presets/gpus/NAME.json). */
export function gpuPreset(name: string): GpuPreset {
  let part = gpuParts.get(name);
  if (!part) {
    const raw = GPU_PRESET_FILES[name];
    if (raw === undefined) throw new Error(unknownName('GPU preset', name, Object.keys(GPU_PRESET_FILES)));
    part = validateGpuPreset(raw, `${PRESET_DIR}/gpus/${name}.json`);
    gpuParts.set(name, part);
  }
  return part;
}

/** A validated host tier part by file name (presets/tiers/NAME.json). */
export function tierPreset(name: string): HostTierPreset {
  let part = tierParts.get(name);
  if (!part) {
    const raw = TIER_PRESET_FILES[name];
    if (raw === undefined) throw new Error(unknownName('tier preset', name, Object.keys(TIER_PRESET_FILES)));
    part = validateTierPreset(raw, `${PRESET_DIR}/tiers/${name}.json`);
    tierParts.set(name, part);
  }
  return part;
}

/** The machine presets, in the order of machines.json. */
export function listHardware(): { name: string; description: string }[] {
  return Object.entries(machines()).map(([name, m]) => ({ name, description: m.description }));
}

/** Compose and validate the machine preset `name`; each call returns a fresh object. */
export function resolveMachine(name: string): HardwareProfile {
  const list = machines();
  const entry = Object.hasOwn(list, name) ? list[name] : undefined;
  if (!entry) throw new Error(unknownName('hardware preset', name, Object.keys(list)));
  const profile = composeMachine(name, entry, gpuPreset(entry.gpu), entry.tiers.map(tierPreset));
  return validateProfile(profile, `machine "${name}" (${PRESET_DIR}/machines.json)`);
}

/**
 * A machine preset by name, or a kvtier-hardware/v1 JSON file by path (e.g. what `hil calibrate`
 * writes). A name that is neither gives an Error listing the presets.
 */
export function loadHardware(nameOrPath: string): HardwareProfile {
  if (Object.hasOwn(machines(), nameOrPath)) return resolveMachine(nameOrPath);
  const path = resolve(nameOrPath);
  if (existsSync(path) && statSync(path).isFile()) return validateProfile(readJsonFile(path), nameOrPath);
  const names = Object.keys(machines()).join(', ');
  throw new Error(
    `hardware "${nameOrPath}" is neither a preset nor a file (no file at ${path}); ` +
      `presets: ${names}; or give the path to a kvtier-hardware/v1 JSON profile`,
  );
}

function unknownName(what: string, name: string, valid: readonly string[]): string {
  return `unknown ${what} "${name}" (valid: ${valid.join(', ')})`;
}
