/**
 * The readiness checks and which seed system claims which, read from each system's design
 * (docs/seed-*.md and the policy's description). Data, not code: a policy claims a check by listing it.
 */
export const CHECKS = ['tsunami', 'precision', 'stutter', 'needle'] as const;
export type CheckName = (typeof CHECKS)[number];

export const CHECK_TITLES: Readonly<Record<CheckName, string>> = {
  tsunami: 'Memory tsunami',
  precision: 'Precision decay',
  stutter: 'Stutter-free',
  needle: 'Needle-in-a-haystack',
};

/** One quantized block format a policy stores, as the error tables key it. */
export interface QuantFormat {
  bits: number;
  group: number;
  rotation: boolean;
}

export interface PolicyClaims {
  policy: string;
  system: string;
  claims: readonly CheckName[];
  /** policy options the readiness runs pass (the configuration whose claims are checked) */
  options: Readonly<Record<string, unknown>>;
  /** the quantized formats the design stores (precision decay reads these rows) */
  quantFormats: readonly QuantFormat[];
  /** where the claims come from */
  design: string;
}

export const CLAIMS: readonly PolicyClaims[] = [
  {
    policy: 'synapsevm',
    system: 'SynapseVM',
    claims: ['tsunami', 'precision', 'stutter', 'needle'],
    options: {},
    quantFormats: [
      { bits: 4, group: 128, rotation: false },
      { bits: 2, group: 128, rotation: false },
    ],
    design: 'docs/seed-synapsevm.md: L2 DRAM INT4 G128, L3 NVMe INT2; copies staged within the compute they hide; hot demoted blocks promoted back at FP16',
  },
  {
    policy: 'dpnc',
    system: 'DPNC',
    claims: ['tsunami', 'stutter'],
    options: {},
    quantFormats: [],
    design: 'docs/seed-dpnc.md: demand-paged HBM page cache over DRAM/CXL/SSD/HDD, pages prefetched one layer ahead; stores FP16 pages',
  },
  {
    policy: 'slep',
    system: 'NTransformer (SLEP)',
    claims: ['precision', 'stutter'],
    options: { kv_precision: 'rotatekv-4' },
    quantFormats: [{ bits: 4, group: 128, rotation: true }],
    design: 'docs/seed-ntransformer.md: SLEP double-buffered weight streaming; RotateKV (Hadamard-rotated) KV, here at 4 bits',
  },
  {
    policy: 'ntransformer',
    system: 'NTransformer',
    claims: ['precision', 'stutter'],
    options: {},
    quantFormats: [
      { bits: 8, group: 128, rotation: true },
      { bits: 4, group: 128, rotation: true },
      { bits: 2, group: 128, rotation: true },
    ],
    design: 'docs/seed-ntransformer.md: SLEP weight streaming + RotateKV + per-layer KV bits 16/8/4/2',
  },
  {
    policy: 'smartkv',
    system: 'SmartKV',
    claims: ['precision'],
    options: {},
    quantFormats: [
      { bits: 8, group: 128, rotation: false },
      { bits: 4, group: 128, rotation: false },
      { bits: 3, group: 128, rotation: false },
      { bits: 2, group: 128, rotation: false },
    ],
    design: 'policies/smartkv.ts: per-block mixed precision from {8, 4, 3, 2} bits by attention importance',
  },
];

export const DEFAULT_POLICIES: readonly string[] = CLAIMS.map((c) => c.policy);

export function claimsOf(policy: string): PolicyClaims {
  const c = CLAIMS.find((x) => x.policy === policy);
  if (!c) throw new Error(`--policies: "${policy}" is not a seed system with readiness claims (valid: ${DEFAULT_POLICIES.join(', ')})`);
  return c;
}

/** Parse a comma-separated policy list; each must be in the claims table, no duplicates. */
export function parsePolicies(list: string): string[] {
  const names = list.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (names.length === 0) throw new Error(`--policies: give at least one of ${DEFAULT_POLICIES.join(', ')}`);
  const seen = new Set<string>();
  for (const n of names) {
    claimsOf(n);
    if (seen.has(n)) throw new Error(`--policies: "${n}" is listed twice`);
    seen.add(n);
  }
  return names;
}
