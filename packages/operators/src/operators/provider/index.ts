/**
 * The DigitalHumanProvider operator: each `DigitalHumanProvider` (`dhp.example.com/v1`;
 * `v1alpha1` still served, deprecated) owns one instance in a vendor's HTTP API — created
 * idempotently, its health reflected in a `Ready` condition, cleaned up through the
 * `dhp.example.com/provider-cleanup` finalizer.
 *
 * `registerProviderOperator(manager, options)` (`register.ts`; the operator process imports it
 * alone, without the schemas this index re-exports) declares its watches (the CRs, and Secrets by
 * metadata only: the token of the one a CR names is read on demand, `credentials.ts`) and its
 * controller; the periodic check doubles as the health check
 * (`healthIntervalSeconds`, default 10 s, jittered). The account watches (`account-watches.ts`,
 * ADR 0028) read each vendor account in use every `observeIntervalSeconds` (3 s) and wake the
 * providers whose vendor state changed; the reconciler reads their snapshot instead of calling
 * the vendor per provider.
 *
 * Files: `reconciler.ts` (one CR, one pass), `deletion.ts` (a deleted CR, up to the finalizer's
 * release), `abandonment.ts` (the manual way out when a vendor is gone for good), `vendor-api.ts`
 * (the vendor in the reconciler's terms, one limiter per endpoint), `vendor/` (the HTTP client and
 * its error taxonomy), `vendor-recovery.ts` (wakes CRs waiting on an endpoint when it answers
 * again), `account-watches.ts` (one fleet read per vendor account in use), `key-holds.ts` (a key
 * holds its place in those two only while its latest reconcile took it), `late-creates.ts` and
 * `late-create-ledger.ts` (instances whose create landed after the finalizer went, ADR 0037),
 * `usage-status.ts` (the quota conditions and the status write bound), `limits-plan.ts`
 * (spec.limits → the vendor), `vendor-metrics.ts`, `provider-config.ts`, `api/` (schema, CRD,
 * constants).
 * @module
 */
export { registerProviderOperator } from './register.ts';
export type { ProviderOperatorOptions } from './register.ts';
export * from './api/index.ts';
export { ProviderReconciler } from './reconciler.ts';
export { parseProviderConfig, providerConfigProblems, defaultProviderConfig } from './provider-config.ts';
export type { ProviderConfig } from './provider-config.ts';
