/**
 * The control plane a test suite should use: an existing cluster when the environment names one
 * (`$CONVERGE_ENVTEST_KUBECONFIG`, like controller-runtime envtest's `USE_EXISTING_CLUSTER`), else
 * a fresh local one started now.
 *
 * Guarantees: `stop()` stops only what this call started (an existing cluster is left alone) and
 * is idempotent. Tests sharing an existing cluster should each work in a namespace of their own.
 * @module
 */
import { startControlPlane } from './launcher.ts';
import type { StartControlPlaneOptions } from './launcher.ts';

/** The variable naming an existing cluster's kubeconfig. */
export const EXISTING_CLUSTER_ENV = 'CONVERGE_ENVTEST_KUBECONFIG';

export interface UsedControlPlane {
  readonly kubeconfigPath: string;
  /** True when this call started the control plane (and `stop()` stops it). */
  readonly started: boolean;
  stop(): Promise<void>;
}

export async function useControlPlane(options: StartControlPlaneOptions = {}): Promise<UsedControlPlane> {
  const existing = process.env[EXISTING_CLUSTER_ENV];
  if (existing) return { kubeconfigPath: existing, started: false, stop: async () => undefined };
  const cluster = await startControlPlane(options);
  return { kubeconfigPath: cluster.kubeconfigPath, started: true, stop: () => cluster.stop() };
}
