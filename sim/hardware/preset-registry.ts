/**
 * The shipped hardware parts, imported as JSON modules so `tsc` copies them into dist/ and they load
 * the same from the TypeScript sources and from the build. A new part is one JSON file plus one line.
 */
import a100 from './presets/gpus/a100-80gb-pcie.json' with { type: 'json' };
import h100 from './presets/gpus/h100-80gb-hbm3.json' with { type: 'json' };
import h200 from './presets/gpus/h200-141gb.json' with { type: 'json' };
import rtx3090 from './presets/gpus/rtx3090.json' with { type: 'json' };
import rtx4090 from './presets/gpus/rtx4090.json' with { type: 'json' };
import machines from './presets/machines.json' with { type: 'json' };
import cxlType3 from './presets/tiers/cxl-type3.json' with { type: 'json' };
import ddr5Desktop from './presets/tiers/ddr5-desktop.json' with { type: 'json' };
import ddr5 from './presets/tiers/ddr5.json' with { type: 'json' };
import dpncCxl from './presets/tiers/dpnc-cxl.json' with { type: 'json' };
import dpncDram from './presets/tiers/dpnc-dram.json' with { type: 'json' };
import dpncHdd from './presets/tiers/dpnc-hdd.json' with { type: 'json' };
import dpncSsd from './presets/tiers/dpnc-ssd.json' with { type: 'json' };
import hdd from './presets/tiers/hdd.json' with { type: 'json' };
import nvmeGen4 from './presets/tiers/nvme-gen4.json' with { type: 'json' };
import nvmeGen5 from './presets/tiers/nvme-gen5.json' with { type: 'json' };

/** file name (without .json) -> parsed, not yet validated content */
export const GPU_PRESET_FILES: Readonly<Record<string, unknown>> = {
  'a100-80gb-pcie': a100,
  'h100-80gb-hbm3': h100,
  'h200-141gb': h200,
  rtx3090,
  rtx4090,
};

export const TIER_PRESET_FILES: Readonly<Record<string, unknown>> = {
  'cxl-type3': cxlType3,
  ddr5,
  'ddr5-desktop': ddr5Desktop,
  'dpnc-cxl': dpncCxl,
  'dpnc-dram': dpncDram,
  'dpnc-hdd': dpncHdd,
  'dpnc-ssd': dpncSsd,
  hdd,
  'nvme-gen4': nvmeGen4,
  'nvme-gen5': nvmeGen5,
};

export const MACHINES_FILE: unknown = machines;

/** Where each part lives, for error messages. */
export const PRESET_DIR = 'sim/hardware/presets';
