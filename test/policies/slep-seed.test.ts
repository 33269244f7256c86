import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import { GiB } from '../../sim/hardware/profile.js';
import { loadModel } from '../../sim/models/load-model.js';
import { layerWeightBytes, otherWeightBytes, weightBytes } from '../../policies/weight-bytes.js';
import { simulate } from '../../sim/run.js';
import { hostWeightBytes } from '../../sim/weight-streaming.js';
import { generateTrace } from '../../traces/generator.js';

// The seed's Phase 2 estimate: Llama-3-70B on an RTX 3090 over PCIe 4 x16, INT4 layers of ~428 MB
// streamed from DRAM: ~17 ms per layer (428 MB / ~25 GB/s), 80 layers -> ~1.4 s per token -> ~0.7 tok/s.
// Here the same, hand-computed from the presets' numbers, against the simulator's timeline.
const dir = mkdtempSync(join(tmpdir(), 'kvtier-slep-seed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const trace = join(dir, 'l70.kvt');
generateTrace(trace, { model: 'llama-3-70b', layers: 80, prompt_tokens: 256, steps: 4, encoding: 'topk', seed: 3 });

const hw = loadHardware('rtx3090-pcie4');
const pcieH2D = hw.links.find((k) => k.name === 'pcie')!.b_to_a; // host -> device: alpha 5.93 us, 25.2 GB/s
const gpu = hw.gpu; // 822 GB/s, 4 us launch

// Llama-3-70B (config.json): hidden 8192, 64 query / 8 KV heads of 128, SwiGLU intermediate 28672, vocab 128256
const layerParams = 2 * 8192 * 64 * 128 + 2 * 8192 * 8 * 128 + 3 * 8192 * 28672; // q,o + k,v + gate,up,down
const otherParams = 2 * 128256 * 8192; // embeddings + LM head (untied)
const copyUs = (bytes: number) => pcieH2D.alpha_us + bytes / (pcieH2D.GBps * 1e3);
const linearUs = (bytes: number) => gpu.kernel_launch_us + bytes / (gpu.hbm_bandwidth_GBps * 1e3);

describe('SLEP: Llama-3-70B on an RTX 3090 over PCIe 4 (the seed estimate)', () => {
  it('the INT4 layer sizes follow from the model: 427,819,008 B at 4.0 bits, 454,557,696 B with an FP16 scale + zero per 128 weights', () => {
    expect(layerParams).toBe(855_638_016);
    const m = loadModel('llama-3-70b');
    expect(m.weight_bytes_per_layer).toBe(2 * layerParams);
    expect(layerWeightBytes(m, { bits: 4, groupSize: 128, scaleBytes: 0 })).toBe(layerParams / 2);
    expect(layerWeightBytes(m, { bits: 4, groupSize: 128, scaleBytes: 4 })).toBe(layerParams / 2 + (layerParams / 128) * 4);
    expect(layerWeightBytes(m, { bits: 8, groupSize: 128, scaleBytes: 4 })).toBe(layerParams + (layerParams / 128) * 4);
    expect(otherWeightBytes(m, { bits: 4, groupSize: 128, scaleBytes: 4 })).toBe(otherParams / 2 + (otherParams / 128) * 4);
    expect(weightBytes(1000, { bits: 16, groupSize: 128, scaleBytes: 4 })).toBe(2000);
    expect(weightBytes(129, { bits: 4, groupSize: 128, scaleBytes: 2 })).toBe(65 + 2 * 2);
    expect(() => weightBytes(1, { bits: 3, groupSize: 128, scaleBytes: 4 })).toThrow(/weight bits must be one of 16, 8, 4 \(got 3\)/);
  });

  it('seed count (4.0 bits, scales not counted): 17.0 ms per layer, 1.359 s per token = 0.736 tok/s; step 0 adds the last linear kernel and the LM head', () => {
    const layerBytes = layerParams / 2;
    const c = copyUs(layerBytes); // 5.93 + 427,819,008 / 25,200 = 16,982.87 us
    expect(c).toBeCloseTo(16_982.87, 1);
    expect(layerBytes / 25e9).toBeCloseTo(0.0171, 4); // the seed's 428 MB / 25 GB/s
    const r = simulate({ trace, policy: 'slep', hardware: 'rtx3090-pcie4', hbm_budget: '100%', policy_options: { weight_bits: 4, weight_scale_bytes: 0 } });
    const tbt = r.steps.map((s) => s.latency_ms * 1e3);
    // the weight stream never waits: each copy starts when the previous one ends (2 slots, compute ~0.6 ms per layer)
    const head = linearUs(otherParams / 2 / 2); // LM head: half of the non-layer weights
    expect(tbt[0]).toBeCloseTo(80 * c + linearUs(layerBytes) + head, 3);
    for (const t of tbt.slice(1)) expect(t).toBeCloseTo(80 * c, 3);
    expect(1e6 / tbt[3]).toBeCloseTo(0.7360, 4);
    expect(r.summary.tokens_per_s).toBeGreaterThan(0.7);
  });

  it('default INT4 with group-128 scale + zero: 18.04 ms per layer, 1.4435 s per token = 0.693 tok/s', () => {
    const layerBytes = layerParams / 2 + (layerParams / 128) * 4;
    const c = copyUs(layerBytes);
    const r = simulate({ trace, policy: 'slep', hardware: 'rtx3090-pcie4', hbm_budget: '100%', policy_options: { weight_bits: 4 } });
    for (const s of r.steps.slice(1)) expect(s.latency_ms * 1e3).toBeCloseTo(80 * c, 3);
    expect(80 * c).toBeCloseTo(1_443_514.7, 0);
    // every layer's weights crossed PCIe once per step
    expect(r.steps[2]['bytes.pcie:dram->hbm']).toBe(80 * layerBytes);
  });

  it('1.0 tok/s: 25 layers kept resident in HBM leave 55 streamed layers = 0.992 s per token', () => {
    const c = copyUs(layerParams / 2 + (layerParams / 128) * 4);
    const r = simulate({ trace, policy: 'slep', hardware: 'rtx3090-pcie4', hbm_budget: '100%', policy_options: { weight_bits: 4, resident_layers: 25 } });
    for (const s of r.steps.slice(1)) expect(s.latency_ms * 1e3).toBeCloseTo(55 * c, 3);
    expect(1e6 / (55 * c)).toBeCloseTo(1.0076, 4);
  });

  it('HBM counts the 2 slots, the non-layer weights and the reserve, not the whole model; the error names what it counted', () => {
    const layerBytes = layerParams / 2 + (layerParams / 128) * 4;
    const other = otherParams / 2 + (otherParams / 128) * 4;
    const r = simulate({ trace, policy: 'slep', hardware: 'rtx3090-pcie4', hbm_budget: '100%', policy_options: { weight_bits: 4 } });
    expect(r.resolved.hbmFreeBytes).toBe(23.6 * GiB - 2 * layerBytes - other - 2 * GiB);
    const r25 = simulate({ trace, policy: 'slep', hardware: 'rtx3090-pcie4', hbm_budget: '100%', policy_options: { weight_bits: 4, resident_layers: 25 } });
    expect(r25.resolved.hbmFreeBytes).toBe(23.6 * GiB - 27 * layerBytes - other - 2 * GiB);
    expect(() => simulate({ trace, policy: 'slep', hardware: 'rtx3090-pcie4', hbm_budget: '100%', policy_options: { weight_bits: 4, resident_layers: 50 } })).toThrow(
      /does not fit in rtx3090-pcie4's HBM: -\d+\.\d\d GiB free \(23\.6 GiB - \d+\.\d\d GiB weights of llama-3-70b \(50 resident layers \+ 2 streaming slots of 0\.42 GiB, \+ 1\.04 GiB outside the layers\) - 2 GiB reserved\)/,
    );
    // a policy that keeps the weights resident needs the whole FP16 model in HBM
    expect(() => simulate({ trace, policy: 'lru-offload', hardware: 'rtx3090-pcie4', hbm_budget: '10%' })).toThrow(/131\.41 GiB weights of llama-3-70b - 2 GiB reserved/);
    expect(() => simulate({ trace, policy: 'slep', hardware: 'rtx3090-pcie4', hbm_budget: '100%', policy_options: { weight_bits: 5 } })).toThrow(
      /policy slep: option weight_bits must be one of 16, 8, 4 \(got 5\)/,
    );
    expect(() => simulate({ trace, policy: 'slep', hardware: 'rtx3090-pcie4', hbm_budget: '100%', policy_options: { resident_layers: 81 } })).toThrow(
      /policy slep: option resident_layers must be <= 80/,
    );
  });

  it('the streamed layers live in DRAM (the KV cache gets what is left of DRAM): weights that do not fit are refused naming the tier', () => {
    const m = loadModel('llama-3-70b');
    const layerBytes = layerParams / 2 + (layerParams / 128) * 4;
    expect(hostWeightBytes(m, { tier: 'dram', buffers: 2, layerBytes, residentLayers: 25 })).toBe(55 * layerBytes);
    expect(hostWeightBytes(m, { tier: 'dram', buffers: 2 })).toBe(80 * 2 * layerParams);
    expect(hostWeightBytes(m)).toBe(0);
    // the same machine with 64 GiB of DRAM: FP16 layers (127.5 GiB) do not fit, INT4 ones (33.9 GiB) do
    const small = join(dir, 'rtx3090-64g.json');
    writeFileSync(small, JSON.stringify({ ...hw, name: 'rtx3090-64g', tiers: hw.tiers.map((t) => (t.name === 'dram' ? { ...t, capacity_GiB: 64 } : t)) }));
    expect(() => simulate({ trace, policy: 'slep', hardware: small, hbm_budget: '100%' })).toThrow(
      /policy slep: 127\.50 GiB of streamed weights do not fit in rtx3090-64g's dram \(64 GiB\)/,
    );
    expect(simulate({ trace, policy: 'slep', hardware: small, hbm_budget: '100%', policy_options: { weight_bits: 4 } }).steps).toHaveLength(4);
  });
});
