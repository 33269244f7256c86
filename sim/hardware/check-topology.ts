import type { FieldChecks } from './field-checks.js';

/** A link's name and end tier names; a field that failed its own check is undefined. */
export interface LinkEnds {
  name?: string | undefined;
  a?: string | undefined;
  b?: string | undefined;
}

export interface TopologyInput {
  /** tier names in order (undefined where the name itself was invalid) */
  tierNames: (string | undefined)[];
  /** undefined when the links array itself was invalid: then only tier names are checked */
  links: LinkEnds[] | undefined;
}

/**
 * Tier names unique; link names unique; each link joins two different existing tiers; links form a
 * tree rooted at tiers[0]: no cycle (so each pair of tiers has exactly one route) and every tier
 * reachable from tiers[0]. Reachability is judged only when every link end is valid, so one typo
 * gives one message.
 */
export function checkTopology(input: TopologyInput, checks: FieldChecks): void {
  const { tierNames, links } = input;
  const firstIndex = new Map<string, number>();
  tierNames.forEach((name, i) => {
    if (name === undefined) return;
    const seen = firstIndex.get(name);
    if (seen !== undefined) checks.add(`tiers[${i}].name "${name}" repeats tiers[${seen}].name`);
    else firstIndex.set(name, i);
  });
  if (links === undefined) return;
  const tierList = [...firstIndex.keys()].join(', ');

  // union-find over tier indices: a link whose ends are already joined closes a cycle
  const parent = tierNames.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
    return i;
  };
  const linkIndex = new Map<string, number>();
  let endsValid = true;
  links.forEach((link, j) => {
    if (link.name !== undefined) {
      const seen = linkIndex.get(link.name);
      if (seen !== undefined) checks.add(`links[${j}].name "${link.name}" repeats links[${seen}].name`);
      else linkIndex.set(link.name, j);
    }
    const ends: (number | undefined)[] = [];
    for (const end of ['a', 'b'] as const) {
      const t = link[end];
      const i = t === undefined ? undefined : firstIndex.get(t);
      if (t !== undefined && i === undefined) checks.add(`links[${j}].${end} "${t}" is not a tier (tiers: ${tierList})`);
      ends.push(i);
    }
    const [ia, ib] = ends;
    if (ia === undefined || ib === undefined) {
      endsValid = false;
      return;
    }
    if (ia === ib) {
      checks.add(`links[${j}] connects "${link.a}" to itself`);
      return;
    }
    const ra = find(ia);
    const rb = find(ib);
    if (ra === rb) {
      checks.add(
        `links[${j}] ("${link.a}"-"${link.b}") closes a cycle: links must form a tree rooted at tiers[0],` +
          ' so that each pair of tiers has one route',
      );
      return;
    }
    parent[ra] = rb;
  });

  if (!endsValid || tierNames[0] === undefined) return;
  const root = find(0);
  tierNames.forEach((name, i) => {
    if (i === 0 || name === undefined || firstIndex.get(name) !== i) return;
    if (find(i) !== root) {
      checks.add(`tiers[${i}] "${name}" is not reachable from "${tierNames[0]}" through links (add a link to it)`);
    }
  });
}
