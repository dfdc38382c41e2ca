/**
 * The operator's HTTP endpoints: health probes (`/healthz`, `/readyz`) and metrics
 * (`/metrics`, `/debug/<name>`). Both run on every replica, leader or not.
 *
 * Guarantees:
 * - `create*Server` does no I/O; `start(signal)` binds, serves until the signal aborts, then
 *   closes the listening socket and every open connection, and settles. It rejects with a
 *   `ListenError` (server, address, code; a message a person can act on) when the address
 *   cannot be bound (e.g. EADDRINUSE); the manager then fails as a whole. An address of `0` disables the server: `start`
 *   then just waits for the signal. `listening()` gives the bound address (port 0 picks one).
 * - `/healthz` (alias `/livez`) passes while the event loop is not blocked: the largest event-loop
 *   delay over the last one or two windows (default 10 s each) must stay under the threshold
 *   (default 5 s), measured with `perf_hooks.monitorEventLoopDelay`; extra liveness checks may
 *   be added. `/readyz` runs the readiness checks the manager registers (caches synced, watches
 *   healthy, …). Both answer like kube-apiserver: `200 ok`, or `500` listing `[+]name ok` /
 *   `[-]name failed: reason withheld`; `?verbose` shows every check and the reasons;
 *   `?exclude=name` skips a check; `/readyz/<name>` runs one. Checks run concurrently, each
 *   bounded by a timeout (default 5 s), and a throwing check fails with its message.
 * - `/metrics` serves the prom-client registry it is given, in its content type. `/debug/<name>`
 *   serves the JSON its provider returns (the provider gets the query parameters);
 *   `/debug` lists the endpoints.
 * - Only GET and HEAD; other methods get 405.
 * - The metrics server may be put behind an authorizer (`authorize`): `kubernetesAuthorizer`
 *   lets a request through only when the API server authenticates its bearer token
 *   (TokenReview) and allows its user `get` on the path (SubjectAccessReview): 401, 403, or 503
 *   when the API server cannot say (fail closed); outcomes cached for a minute. See
 *   `metrics-auth.ts`. The probe server never is: the kubelet's probes carry no token.
 * - The metrics server may serve HTTPS (`certificates`: a `CertificateSource` of the webhook
 *   module, `certDirCertificates(dir)` or a self-signed one made in memory,
 *   `selfManagedCertificates({ store: memoryCaStore() })`): TLS 1.2 or later; nothing is bound
 *   until the first certificate; a new one is served to new connections without a restart;
 *   plain HTTP on that port gets no answer. The probe server is always plain HTTP (the kubelet
 *   probes without TLS configuration).
 *
 * Caveats: plain HTTP unless given certificates, and without an authorizer no authentication —
 * bind to loopback or a pod-internal port and let the platform protect it. A fully blocked event loop cannot answer at all: the kubelet's probe
 * timeout is what catches that; the event-loop check catches a loop that answers between blocks.
 * @module
 */
export { assertCheckName, createProbeServer, runChecks } from './probe-server.ts';
export type { ProbeServer, ProbeServerOptions, HealthCheck, CheckOutcome, CheckReport } from './probe-server.ts';
export { createMetricsServer, DebugQueryError } from './metrics-server.ts';
export type { MetricsServer, MetricsServerOptions, DebugProvider } from './metrics-server.ts';
export { kubernetesAuthorizer, bearerToken } from './metrics-auth.ts';
export type { MetricsAuthorizer, AuthorizationRequest, AuthorizationVerdict, KubernetesAuthorizerOptions, ReviewClient } from './metrics-auth.ts';
export { ListenError } from './http-endpoint.ts';
export type { EndpointServer } from './http-endpoint.ts';
export { EventLoopMonitor } from './event-loop-monitor.ts';
export type { EventLoopMonitorOptions } from './event-loop-monitor.ts';
export { parseBindAddress } from './bind-address.ts';
export { requestTargetUrl } from './request-target.ts';
export type { BindAddress } from './bind-address.ts';
