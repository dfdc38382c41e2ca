/**
 * For unit tests that need a manager or a cache but no API server: a kubeconfig pointing at a
 * closed port (nothing there answers; watches fail and retry, which these tests do not wait for).
 */
import { KubeConfig } from '@converge/runtime';

export function unreachableKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'nowhere', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
    users: [{ name: 'nobody', token: 'not-a-token' }],
    contexts: [{ name: 'nowhere', cluster: 'nowhere', user: 'nobody' }],
    currentContext: 'nowhere',
  });
  return kc;
}
