/**
 * The budgets and options of the Quest tests' whole replays: at 5% (HBM holds a few pages) every budget
 * factor; at 20% the factors 1 and 1.5 (the selection larger than HBM, selected pages demoted); at 60%
 * the factor 1.
 */
export const QUEST_REPLAY_GRID: readonly [string, Record<string, unknown>][] = [
  ['5%', {}],
  ['5%', { budget_factor: 1.5 }],
  ['5%', { budget_factor: 0.5, dense_layers: 1 }],
  ['20%', {}],
  ['20%', { budget_factor: 1.5 }],
  ['60%', {}],
];
