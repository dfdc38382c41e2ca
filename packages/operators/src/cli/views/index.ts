/**
 * What the CLI shows, as pure functions: objects read from the cluster in, documents (stable
 * JSON shapes, versioned `converge.dev/v1alpha1`) and text out. `converge status`,
 * `converge explain` and the live table of `converge dev` all render through here.
 *
 * What a caller can rely on: nothing here does I/O or reads the clock (`now` is passed in);
 * colours come only from the `Style` passed in (see `colorEnabled`: a TTY, no `NO_COLOR`); Secret
 * values never reach a view (callers pass only whether a Secret and its key exist); the text views
 * print text from the cluster terminal-safe (`terminal-text.ts`), the JSON and YAML documents exact.
 * @module
 */
export * from './style.ts';
export * from './table.ts';
export * from './age.ts';
export * from './status-view.ts';
// The document and its shared parts; the builders every kind uses stay inside the views.
export { MAX_EVENTS, eventViews } from './explanation.ts';
export type { Severity, Finding, ConditionExplanation, EventView, Ownership, DeploymentState, ServiceState, ChildExplanation, DifferenceView, MicroserviceExplanation, ProviderExplanation, Explanation } from './explanation.ts';
export * from './explain-microservice.ts';
export * from './explain-provider.ts';
export * from './explanation-text.ts';
export * from './pod-problems.ts';
export * from './terminal-text.ts';
