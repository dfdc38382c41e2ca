/**
 * The local Kubernetes control plane, from TypeScript: build it, start it, stop it, inspect it.
 *
 * The control plane is real upstream code built from Go modules (see packages/envtest/control-plane/README.md):
 * etcd, kube-apiserver (RBAC, service accounts, optional audit log) and kube-controller-manager,
 * plus a simulator that keeps Nodes Ready and runs pods without containers. Images whose tag
 * starts with `fail` never become ready (for rollout-failure tests).
 *
 * What a caller can rely on:
 * - `ensureControlPlaneBinary()` blocks until a binary for the current Go sources exists in the
 *   user cache dir (building it takes minutes when Go's build cache is cold); concurrent callers
 *   build once.
 * - `startControlPlane()` resolves only when /readyz is ok, the simulated nodes are Ready and the
 *   controller manager runs; it listens on free 127.0.0.1 ports only, chosen below the kernel's
 *   ephemeral range (`freePorts`), so no outgoing connection takes one before it is bound.
 * - `stop()` is idempotent; components are also killed and temp dirs removed when this process
 *   exits or is interrupted, and components die with their parent even on SIGKILL.
 * - `useControlPlane()` is what a test suite calls: an existing cluster named by
 *   `$CONVERGE_ENVTEST_KUBECONFIG`, else a fresh local control plane.
 * - Run one control plane at a time per machine where possible: each costs ~0.5 GB and CPU.
 * @module @converge/envtest
 */
export { ensureControlPlaneBinary, controlPlaneCacheDir, controlPlaneSourceDir, controlPlaneSourceHash } from './binary.ts';
export type { EnsureBinaryOptions } from './binary.ts';
export { startControlPlane } from './launcher.ts';
export { freePorts } from './free-ports.ts';
export type { ControlPlane, ComponentName, StartControlPlaneOptions } from './launcher.ts';
export { useControlPlane, EXISTING_CLUSTER_ENV } from './use-control-plane.ts';
export type { UsedControlPlane } from './use-control-plane.ts';
export { readAuditLog, auditLogSize, matchesAuditFilter, countBy, WRITE_VERBS } from './audit-log.ts';
export type { AuditEvent, AuditFilter } from './audit-log.ts';
export { serveControlEndpoint, callControlEndpoint } from './control-endpoint.ts';
export type { ControlEndpoint } from './control-endpoint.ts';
