/** Checks a policy option naming a tier below HBM; the error lists the valid tiers. */
export function checkLowerTier(policy: string, option: string, tier: string, tiers: readonly string[]): void {
  if (!tiers.includes(tier) || tier === tiers[0]) {
    throw new Error(`policy ${policy}: option ${option} must be one of ${tiers.slice(1).join(', ')} (got "${tier}")`);
  }
}
