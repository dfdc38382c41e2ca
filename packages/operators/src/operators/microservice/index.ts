/**
 * The Microservice operator: a team gives an image and a port (`spec.container`) in a
 * `Microservice` (`platform.example.io/v1`; `v1alpha1` still served, deprecated); the operator owns a Deployment and a Service with the
 * platform's defaults, repairs drift and deletions through its watches, and reports in status
 * whether *this* generation is applied, rolled out and ready — or why it failed.
 *
 * `registerMicroserviceOperator(manager, options)` (`register.ts`) declares its watches and
 * controller on a runtime `Manager`; nothing runs until the manager starts. This index adds the
 * API with its schemas and CRD; the operator process imports `register.ts` alone.
 * @module
 */
export { registerMicroserviceOperator } from './register.ts';
export type { MicroserviceOperatorOptions } from './register.ts';
export { MicroserviceReconciler, SERVICE_NAME_INDEX } from './reconciler.ts';
export { rejectionMessage } from './apply-rejection.ts';
export type { MicroserviceReconcilerDeps } from './reconciler.ts';
export { assessRollout, countEndpoints } from './rollout.ts';
export { endpointSliceForReadiness } from './endpoint-readiness.ts';
export type { RolloutAssessment, RolloutState, RolloutSummary } from './rollout.ts';
export { acceptedConditions, rolloutConditions, failedConditions, MICROSERVICE_CONDITION_REASONS } from './conditions.ts';
export type { ConditionEntry } from './conditions.ts';
export * from './api/index.ts';
export * from './desired-state.ts';
export * from './contains.ts';
export * from './platform-defaults.ts';
