// The addon (host build) for tests of the attention dispatch without a GPU, and the device they describe.
import type { AttentionDeviceFacts, HilAddon } from '../../hil/addon-types.js';
import { loadHil } from '../../hil/load-addon.js';

export const addon = (): HilAddon => {
  const l = loadHil();
  if (!l.ok) throw new Error(l.reasons.join('; '));
  return l.addon;
};

// H100 SXM/PCIe: 132 SMs, 50 MiB L2, 228 KiB shared memory per SM of which 1 KiB is reserved per block.
export const H100: AttentionDeviceFacts = { multiprocessors: 132, l2Bytes: 50 * 2 ** 20, sharedMemPerSmBytes: 228 * 1024, reservedSharedMemPerBlockBytes: 1024 };
