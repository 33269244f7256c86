/**
 * S3-FIFO (Yang et al., SOSP'23): a small FIFO S (10% of the tier) filters blocks used only once,
 * a main FIFO M keeps the rest with a use counter (0..3) that buys a reinsertion, and a ghost FIFO
 * G remembers ids evicted from S so that a returning block goes straight to M. Pinned blocks leave
 * their queue and re-enter it at the tail when released.
 */
import type { CachePolicy, CachePolicyDefinition } from './cache-policy.js';
import { DenseList } from '../common/dense-list.js';

const DEFAULT_SMALL_SHARE = 0.1;

export class S3FifoPolicy implements CachePolicy {
  private readonly small = new DenseList();
  private readonly main = new DenseList();
  private readonly ghost = new DenseList();
  /** queue of each resident block: 1 small, 2 main, 0 not resident */
  private queue = new Uint8Array(1024);
  private freq = new Uint8Array(1024);
  private smallSize = 0;
  private mainSize = 0;

  constructor(private readonly c: number, private readonly smallShare = DEFAULT_SMALL_SHARE) {}

  private ensure(id: number): void {
    if (id < this.queue.length) return;
    const n = Math.max(id + 1, this.queue.length * 2);
    const q = new Uint8Array(n);
    q.set(this.queue);
    const f = new Uint8Array(n);
    f.set(this.freq);
    this.queue = q;
    this.freq = f;
  }

  insert(id: number, pinned: boolean): void {
    this.ensure(id);
    const toMain = this.ghost.remove(id);
    this.freq[id] = 0;
    this.queue[id] = toMain ? 2 : 1;
    if (toMain) this.mainSize++;
    else this.smallSize++;
    if (!pinned) (toMain ? this.main : this.small).push(id);
  }

  access(id: number): void {
    if (id < this.freq.length && this.queue[id] !== 0 && this.freq[id] < 3) this.freq[id]++;
  }

  pin(id: number): void {
    if (!this.small.remove(id)) this.main.remove(id);
  }

  unpin(id: number): void {
    (this.queue[id] === 1 ? this.small : this.main).push(id);
  }

  remove(id: number): void {
    if (id >= this.queue.length || this.queue[id] === 0) return;
    if (this.queue[id] === 1) this.smallSize--;
    else this.mainSize--;
    this.queue[id] = 0;
    if (!this.small.remove(id)) this.main.remove(id);
  }

  evict(): number {
    for (;;) {
      const useSmall = this.small.size > 0 && (this.smallSize >= this.smallShare * this.c || this.main.size === 0);
      if (useSmall) {
        const id = this.small.shift();
        this.smallSize--;
        if (this.freq[id] > 0) {
          this.freq[id] = 0;
          this.queue[id] = 2;
          this.mainSize++;
          this.main.push(id);
          continue;
        }
        this.queue[id] = 0;
        this.ghost.push(id);
        while (this.ghost.size > Math.max(1, this.c - this.c * this.smallShare)) this.ghost.shift();
        return id;
      }
      const id = this.main.shift();
      if (id < 0) return -1;
      if (this.freq[id] > 0) {
        this.freq[id]--;
        this.main.push(id);
        continue;
      }
      this.queue[id] = 0;
      this.mainSize--;
      return id;
    }
  }
}

export interface S3FifoOptions extends Record<string, unknown> {
  small_share: number;
}

export const s3fifoPolicy: CachePolicyDefinition<S3FifoOptions> = {
  name: 's3fifo',
  description: 'S3-FIFO: small probationary FIFO, main FIFO with reinsertion, ghost FIFO of recent one-hit blocks',
  options: [{ name: 'small_share', type: 'number', default: DEFAULT_SMALL_SHARE, min: 0, max: 1, description: "the small FIFO's share of the tier (the ghost FIFO holds the rest's worth of ids)" }],
  create: (capacityBlocks, o) => new S3FifoPolicy(capacityBlocks, o?.small_share),
};
