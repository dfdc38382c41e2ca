/**
 * The operators' configuration under `converge dev`: the built-in one (`defaultOperatorConfig`),
 * with a short shutdown grace period, a failing rollout called stalled after a minute rather than
 * Kubernetes' ten, and the local vendor simulator's CA trusted beside the system CAs.
 * @module
 */
import { defaultOperatorConfig } from '../../operators/operator-config.ts';
import type { OperatorConfig } from '../../operators/operator-config.ts';

/** How long a rollout without progress waits before it is RolloutStalled under `converge dev` (the platform default is Kubernetes' 600 s). */
export const DEV_PROGRESS_DEADLINE_SECONDS = 60;

export function devOperatorConfig(vendorCaPath: string): OperatorConfig {
  return {
    ...defaultOperatorConfig,
    shutdownGraceMs: 5_000,
    microservice: {
      ...defaultOperatorConfig.microservice,
      defaults: { ...defaultOperatorConfig.microservice.defaults, progressDeadlineSeconds: DEV_PROGRESS_DEADLINE_SECONDS },
    },
    // The provider operator trusts the system CAs plus this bundle (see packages/operators/src/operators/provider/provider-config.ts).
    provider: { vendor: { caFile: vendorCaPath } },
  };
}
