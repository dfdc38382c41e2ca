/**
 * The names of the `compare` benchmark's contenders and settings rows, on their own so that the
 * flag parser (bench/support/options.ts, pure) can validate them without loading the scenario.
 * @module
 */
export const CONTENDER_NAMES = ['converge', 'controller-runtime', 'controller-runtime-shared', 'kopf', 'minimal-client'] as const;
export type ContenderName = (typeof CONTENDER_NAMES)[number];

export const SETTING_NAMES = ['defaults', 'limited', 'unlimited'] as const;
export type SettingName = (typeof SETTING_NAMES)[number];
