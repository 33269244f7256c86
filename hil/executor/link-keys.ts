/** Link-direction keys ("<link>:<from>-><to>") along the route between two tiers, as the simulator counts bytes. */
import type { HardwareProfile } from '../../sim/hardware/profile.js';

export function allLinkKeys(hw: HardwareProfile): string[] {
  return hw.links.flatMap((l) => [`${l.name}:${l.a}->${l.b}`, `${l.name}:${l.b}->${l.a}`]);
}

export function routeKeys(hw: HardwareProfile, from: string, to: string): string[] {
  const prev = new Map<string, { node: string; key: string }>([[from, { node: '', key: '' }]]);
  const queue = [from];
  while (queue.length) {
    const n = queue.shift()!;
    for (const l of hw.links) {
      const hops: [string, string, string][] = [
        [l.a, l.b, `${l.name}:${l.a}->${l.b}`],
        [l.b, l.a, `${l.name}:${l.b}->${l.a}`],
      ];
      for (const [x, y, key] of hops) {
        if (x === n && !prev.has(y)) {
          prev.set(y, { node: n, key });
          queue.push(y);
        }
      }
    }
  }
  if (!prev.has(to)) throw new Error(`no route from tier ${from} to ${to} in ${hw.name}`);
  const keys: string[] = [];
  for (let n = to; n !== from; n = prev.get(n)!.node) keys.unshift(prev.get(n)!.key);
  return keys;
}
