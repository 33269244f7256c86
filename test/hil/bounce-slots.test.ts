// The DRAM bounce slots of the file tier: what the host waits for before a copy or a file request
// uses a slot, and that it waits (a promise) only then. A stand-in backend counts the memory-stream
// synchronizations; slots are 4096 bytes wide.
import { describe, expect, it } from 'vitest';
import type { NativeBackend } from '../../hil/addon-types.js';
import { BounceSlots } from '../../hil/executor/bounce-slots.js';
import { FileStepTimes } from '../../hil/executor/file-step-times.js';

function slots() {
  const synced: string[] = [];
  const b = { synchronize: async (s?: string) => void synced.push(s ?? 'all') } as unknown as NativeBackend;
  const times = new FileStepTimes(2);
  return { bs: new BounceSlots(b, 4096, times), synced, times };
}
const toDram = (dstOff: number, bytes: number) => ({ o: 'copy' as const, s: 1 as const, dst: 'dram' as const, dstOff, src: 'arena' as const, srcOff: 0, bytes });
const fromDram = (srcOff: number, bytes: number) => ({ o: 'copy' as const, s: 1 as const, dst: 'arena' as const, dstOff: 0, src: 'dram' as const, srcOff, bytes });

describe('bounce slots', () => {
  it('a copy with no file write on its slots goes at once; a file request after it on those slots synchronizes the memory stream once', async () => {
    const { bs, synced, times } = slots();
    expect(bs.memoryCopy(toDram(4096, 8192))).toBeUndefined();
    // slots 1 and 2 were used by a copy not yet synchronized; slot 0 and slot 3 were not
    expect(bs.ready(0, 4096)).toBe(true);
    expect(bs.ready(12288, 4096)).toBe(true);
    expect(bs.ready(8192, 4096)).toBe(false);
    expect(bs.ready(4000, 200)).toBe(false); // touches slots 0 and 1
    await bs.syncMemoryIfNeeded(8192, 4096, 1);
    expect(synced).toEqual(['memory']);
    expect(times.syncs[1]).toBe(1);
    // one synchronization covers every copy issued before it
    expect(bs.ready(4096, 8192)).toBe(true);
    await bs.syncMemoryIfNeeded(4096, 4096, 1);
    expect(synced).toEqual(['memory']);
    // a copy from a slot counts as a use as well
    expect(bs.memoryCopy(fromDram(0, 4096))).toBeUndefined();
    expect(bs.ready(0, 4096)).toBe(false);
    expect(bs.ready(4096, 4096)).toBe(true);
  });

  it('a copy into a slot a file write still reads waits for that write, and the slot is then free', async () => {
    const { bs } = slots();
    let finish!: () => void;
    const write = new Promise<void>((r) => (finish = r));
    bs.writing(8192, 4096, write);
    expect(bs.ready(8192, 4096)).toBe(false);
    expect(bs.ready(0, 8192)).toBe(true);
    // a copy out of the slot does not wait; one into the neighbouring slot neither
    expect(bs.memoryCopy(fromDram(8192, 4096))).toBeUndefined();
    expect(bs.memoryCopy(toDram(0, 4096))).toBeUndefined();
    // into it: a promise that settles once the write has
    let copied = false;
    const wait = bs.memoryCopy(toDram(8192, 100));
    expect(wait).toBeInstanceOf(Promise);
    void wait!.then(() => (copied = true));
    await Promise.resolve();
    expect(copied).toBe(false);
    finish();
    await wait;
    expect(copied).toBe(true);
    // the write is no longer pending there (the copy into it is, until a synchronization)
    expect(await bs.allWrites()).toEqual([]);
  });
});
