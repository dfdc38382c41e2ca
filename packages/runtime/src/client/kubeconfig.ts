/**
 * Finds the kubeconfig the way kubectl does: an explicit path, then `KUBECONFIG`, then
 * `~/.kube/config`, then the in-cluster service account.
 * @module
 */
import { KubeConfig } from '@kubernetes/client-node';

export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  return kc;
}
