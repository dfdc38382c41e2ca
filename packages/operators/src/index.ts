/**
 * `@converge/operators`: the Converge operators as a library, for processes that embed them
 * (tests, a custom `main`). The `converge` command (`bin/converge.js` → `cli/main.ts`) is the
 * usual way to run them.
 *
 * What a caller can rely on: `runOperatorProcess` runs both operators (or the ones named) on
 * one manager until its signal aborts; the kinds, their TypeBox schemas and CRDs are the ones
 * `converge crds` prints.
 * @module
 */
export { runOperatorProcess } from './operators/operator-process.ts';
export type { OperatorProcessOptions } from './operators/operator-process.ts';
export { defaultOperatorConfig, loadOperatorConfig } from './operators/operator-config.ts';
export type { OperatorConfig } from './operators/operator-config.ts';
export * from './operators/microservice/index.ts';
export * from './operators/provider/index.ts';
export { addConversionWebhook, conversionRegistry, localConversionWebhook, startStandaloneConversionWebhook, CONVERTED_CRDS } from './operators/conversion-webhook.ts';
export type { WebhookSettings } from './operators/conversion-webhook.ts';
export { startVendorSimulator } from './vendor-sim/index.ts';
