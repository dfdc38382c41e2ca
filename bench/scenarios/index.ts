/**
 * The benchmark scenarios, in the order they run. Cold start, idle cost, repair and churn share
 * one fleet of converged Microservices (each leaves it converged for the next, churn last);
 * memory, providers and provider-signals start operators of their own; compare (only when asked for) runs its own
 * contenders on namespaces of its own; service-creates (only when asked for) measures the control plane alone.
 * @module
 */
import type { ScenarioName } from '../support/options.ts';
import { coldStart } from './cold-start.ts';
import { idleCost } from './idle-cost.ts';
import { repair } from './repair.ts';
import { churn } from './churn.ts';
import { memory } from './memory.ts';
import { providers } from './providers.ts';
import { providerSignals } from './provider-signals.ts';
import { compare } from './compare.ts';
import { dashboard } from './dashboard.ts';
import { cliStart } from './cli-start.ts';
import { serviceCreates } from './service-creates.ts';
import type { Scenario } from './types.ts';

export const SCENARIOS: Record<ScenarioName, Scenario> = {
  'cold-start': coldStart,
  'idle-cost': idleCost,
  repair,
  churn,
  memory,
  providers,
  'provider-signals': providerSignals,
  compare,
  dashboard,
  'cli-start': cliStart,
  'service-creates': serviceCreates,
};

/** Scenarios that use the shared fleet. */
export const FLEET_SCENARIOS: readonly ScenarioName[] = ['cold-start', 'idle-cost', 'repair', 'churn'];

export type { Scenario, ScenarioResult, BenchContext, Table, ChartPanel, ChartSeries, Cell } from './types.ts';
export { startFleet, FLEET_NAMESPACE } from './fleet.ts';
export type { Fleet } from './fleet.ts';
