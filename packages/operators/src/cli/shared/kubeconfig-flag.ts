/**
 * `--kubeconfig` as kubectl reads it: the flag, else `KUBECONFIG`, else `~/.kube/config`, else
 * the in-cluster service account.
 * @module
 */
import type { KubeConfig } from '@converge/runtime';
import { loadKubeConfig } from '@converge/runtime';

export function kubeConfigFrom(flag: string | undefined): KubeConfig {
  return loadKubeConfig(flag);
}
