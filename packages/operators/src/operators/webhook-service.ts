/**
 * Where the API server reaches the operators' conversion webhook in a cluster: the Service that
 * `deploy/` installs in front of every operator replica (port 443 → the pods' `:9443`). Both CRDs
 * name it; for local runs the operator points them at its own URL instead (ADR 0024).
 * @module
 */
export const WEBHOOK_SERVICE = { namespace: 'converge-system', name: 'converge-webhook', path: '/convert', port: 443 } as const;
