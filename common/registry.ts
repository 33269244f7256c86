/**
 * A name-keyed registry of definitions: the one shape behind the attention-level policy registry
 * (policies/registry.ts) and the prefix-cache policy registry (serving/cache-policy-registry.ts).
 * A duplicate name is rejected unless `override` is set; an unknown name is an error listing the
 * valid ones. `noun` names the kind of definition in those errors ("policy", "cache policy").
 */
export interface Named {
  readonly name: string;
}

export class Registry<D extends Named> {
  private readonly defs = new Map<string, D>();

  constructor(readonly noun: string) {}

  register(def: D, opts: { override?: boolean } = {}): void {
    if (this.defs.has(def.name) && !opts.override) {
      throw new Error(`${this.noun} "${def.name}" is already registered (pass { override: true } to replace it)`);
    }
    this.defs.set(def.name, def);
  }

  /** The definition named `name`; throws naming the valid ones when there is none. */
  get(name: string): D {
    const def = this.defs.get(name);
    if (!def) throw new Error(`unknown ${this.noun} "${name}" (valid: ${this.names().join(', ')})`);
    return def;
  }

  /** The definition named `name`, or undefined. */
  find(name: string): D | undefined {
    return this.defs.get(name);
  }

  /** Definitions in registration order (an override keeps its predecessor's place). */
  list(): D[] {
    return [...this.defs.values()];
  }

  names(): string[] {
    return [...this.defs.keys()];
  }
}
