/** A worker of the block-packing pool: packs its task's blocks and hands the bytes back without a copy. */
import { Piscina } from 'piscina';
import { packBlocks, type PackTask } from './pack-blocks.js';

export default function pack(task: PackTask): ArrayBuffer {
  const bytes = packBlocks(task);
  return Piscina.move(bytes.buffer as ArrayBuffer) as ArrayBuffer;
}
