/**
 * Credentials of a ServiceAccount for tests that run the operator as it runs in a cluster: a
 * token from the TokenRequest API (1 h) in a kubeconfig whose only user is that token, pointing
 * at the shared test control plane.
 * @module
 */
import { readFileSync } from 'node:fs';
import { KubeConfig, loadKubeConfig } from '@converge/runtime';
import type { KubeClient } from '@converge/runtime';
import { kubeconfigPath } from './operator-harness.ts';

/** A KubeConfig (current context `sa`) whose only credential is a fresh token of `ns/sa`. */
export async function serviceAccountKubeConfig(client: KubeClient, ns: string, sa: string): Promise<KubeConfig> {
  const tokenRequest = await client.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  const cluster = loadKubeConfig(kubeconfigPath()).getCurrentCluster()!;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'local', server: cluster.server, caData: cluster.caData ?? Buffer.from(readFileSync(cluster.caFile!)).toString('base64') }],
    users: [{ name: sa, token: tokenRequest.status.token }],
    contexts: [{ name: 'sa', cluster: 'local', user: sa }],
    currentContext: 'sa',
  });
  return kc;
}
