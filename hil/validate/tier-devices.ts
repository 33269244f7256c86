/**
 * What backs each tier of a HIL run on this machine: the accelerator (HBM), host memory (DRAM, the
 * pinned pool), and the storage tier's file: its directory's mount (longest matching mount point
 * in /proc/mounts), filesystem, block device and the driver behind it (/sys/block/<dev>/device: a
 * virtio disk says virtio_blk, a real NVMe drive says nvme and its model). Tiers without hardware
 * here (CXL, HDD) are named as simulated only.
 */
import { existsSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { basename, resolve } from 'node:path';

export interface TierDevice {
  tier: string;
  kind: string;
  device: string;
}

export interface MountInfo {
  source: string;
  mount_point: string;
  fstype: string;
}

/** the mount that holds `path`, from /proc/mounts text (longest mount point that is a prefix of it) */
export function mountOf(path: string, mountsText: string): MountInfo | null {
  let best: MountInfo | null = null;
  for (const line of mountsText.split('\n')) {
    const [source, mp, fstype] = line.split(' ');
    if (!source || !mp || !fstype) continue;
    const point = mp.replace(/\\040/g, ' ');
    const inside = path === point || path.startsWith(point.endsWith('/') ? point : `${point}/`);
    if (inside && (!best || point.length >= best.mount_point.length)) best = { source, mount_point: point, fstype };
  }
  return best;
}

function read(p: string): string | null {
  try {
    return readFileSync(p, 'utf8').trim();
  } catch {
    return null;
  }
}

/** the block device behind a mount source such as /dev/vda1 or /dev/nvme0n1p2, and its driver and model */
export function describeBlockDevice(source: string, sys = '/sys/block'): string {
  if (!source.startsWith('/dev/')) return `${source} (not a block device)`;
  let dev = basename(source);
  try {
    dev = basename(realpathSync(source));
  } catch {
    // keep the name as given
  }
  // a partition's disk: the /sys/block entry whose name starts the partition's name
  const disk = existsSync(`${sys}/${dev}`) ? dev : (['nvme', 'vd', 'sd', 'xvd', 'md', 'dm-'].map((p) => (dev.startsWith(p) ? dev.replace(/p?\d+$/, '') : null)).find((d) => d && existsSync(`${sys}/${d}`)) ?? dev);
  const parts: string[] = [`/dev/${disk}`];
  let driver: string | null = null;
  try {
    driver = basename(readlinkSync(`${sys}/${disk}/device/driver`));
  } catch {
    driver = null;
  }
  const modalias = read(`${sys}/${disk}/device/modalias`);
  const model = read(`${sys}/${disk}/device/model`);
  const rotational = read(`${sys}/${disk}/queue/rotational`);
  if (driver) parts.push(`driver ${driver}`);
  if (driver?.startsWith('virtio') || modalias?.startsWith('virtio')) parts.push('a virtio disk of a virtual machine (not a local NVMe drive)');
  if (model) parts.push(`model ${model}`);
  if (rotational !== null) parts.push(rotational === '1' ? 'rotational' : 'non-rotational');
  return parts.join(', ');
}

/** what backs the storage tier's file directory */
export function describeFileTier(dir: string, direct: boolean | null): string {
  const abs = resolve(dir);
  let real = abs;
  try {
    real = realpathSync(abs);
  } catch {
    // the directory may not exist yet
  }
  const m = mountOf(real, read('/proc/mounts') ?? '');
  const io = direct === null ? '' : direct ? ', O_DIRECT' : ', buffered (O_DIRECT refused)';
  if (!m) return `a file in ${real} (mount unknown${io})`;
  const backing = m.fstype === 'tmpfs' || m.fstype === 'ramfs' ? 'host memory (a RAM filesystem)' : describeBlockDevice(m.source);
  return `a file in ${real} on ${m.fstype} at ${m.mount_point} (${m.source}): ${backing}${io}`;
}

/**
 * Whether the HIL has no hardware of a tier kind (CXL, HDD: it holds such a tier in pinned host memory
 * or in the file tier, so what it times there is that stand-in's time).
 */
export function hasNoHardware(kind: string): boolean {
  // (describeTiers names these "simulated only")
  return kind !== 'hbm' && kind !== 'dram' && kind !== 'nvme';
}

/**
 * One line per tier of the profile: HBM = the backend's device, DRAM = host memory, NVMe = the file
 * tier's backing, others simulated only.
 */
export function describeTiers(tiers: { name: string; kind: string }[], o: { backend: string; device: string; fileDir: string; direct: boolean | null }): TierDevice[] {
  return tiers.map((t) => {
    let device: string;
    if (t.kind === 'hbm') device = o.backend === 'cuda' ? `${o.device} device memory` : `host memory standing in for HBM (${o.backend} backend: ${o.device})`;
    else if (t.kind === 'dram') device = `host memory, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${cpus().length} CPUs${o.backend === 'cuda' ? ', pinned buffers copied over PCIe' : ''}`;
    else if (t.kind === 'nvme') device = describeFileTier(o.fileDir, o.direct);
    else device = `no ${t.kind.toUpperCase()} hardware here: simulated only`;
    return { tier: t.name, kind: t.kind, device };
  });
}
