/**
 * The tail wave of the split attention kernel. The HIL's attention dispatch
 * (hil/native/common/attention-plan.h, finishAttentionPlan) splits a call's context into chunks of
 * 16 tokens and the chunks over `splits` blocks per KV head (or per group of them), asking for one
 * full wave of resident blocks and then trimming to the fewest splits that keep the most chunks per
 * warp. Where the trimmed count still asks for more blocks than the GPU holds at once (splits x
 * blocks per split > slots), the blocks past the first wave run as a second, short wave, each warp
 * of it taking its chunks one after another on an otherwise idle GPU: the call takes about
 * `us_per_chunk` x chunks per warp longer than the same context without that wave.
 *
 * With 32 KV heads (Llama-2-7B) on a 132-SM GPU at two resident blocks per SM (264 slots), 9 splits
 * (288 blocks) against 8 (256) make the kernel's time follow the context in steps that repeat every
 * 32 blocks between about 1.2k and 4.6k tokens; with 8 KV heads (Llama-3-8B) the trimmed count never
 * passes one wave. The measured times and the fit: lab/notes/HIL-NOTES.md.
 *
 * The rule is the dispatch's own choice of splits; a run whose split count is given (the attention
 * option `splits`, or a call's own) is not what it describes. Other kernels follow it where their
 * plans have the same resident blocks and grid (the profile's attention_waves.kernels: the per-block
 * table kernel at these shapes); one with resident blocks of its own (the INT4 tensor-core kernel)
 * has its tail waves elsewhere, and roofline.ts prices its measured difference to FP16 without FP16's.
 */
import type { AttentionWaves } from './hardware/profile.js';

/** The dispatch's split count and chunks per warp for `chunks` chunks (finishAttentionPlan's own rule, no split count given). */
export function splitOf(chunks: number, w: Pick<AttentionWaves, 'slots' | 'blocks_per_split' | 'warps_per_head'>): { splits: number; chunksPerWarp: number } {
  const wph = w.warps_per_head;
  const wanted = Math.ceil(w.slots / w.blocks_per_split);
  const most = Math.max(1, Math.floor(chunks / (2 * wph)));
  let splits = Math.max(1, Math.min(wanted, most));
  const perWarp = Math.ceil(chunks / (wph * splits));
  splits = Math.max(1, Math.ceil(chunks / (wph * perWarp)));
  return { splits, chunksPerWarp: Math.ceil(chunks / (wph * splits)) };
}

/**
 * The tail wave's chunks per warp for a call over `tokens` tokens: the chunks each warp of the second
 * wave takes where the split count asks for more blocks than the slots, else 0.
 */
export function tailChunks(tokens: number, w: Pick<AttentionWaves, 'slots' | 'blocks_per_split' | 'warps_per_head' | 'chunk_tokens'>): number {
  const chunks = Math.ceil(tokens / w.chunk_tokens);
  if (!(chunks > 0)) return 0;
  const { splits, chunksPerWarp } = splitOf(chunks, w);
  return splits * w.blocks_per_split > w.slots ? chunksPerWarp : 0;
}

/** The time the tail wave adds to an attention call over `tokens` tokens (0 without one). */
export function tailWaveUs(tokens: number, w: AttentionWaves): number {
  return w.us_per_chunk * tailChunks(tokens, w);
}
