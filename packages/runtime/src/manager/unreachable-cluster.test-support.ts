/**
 * Test support: a kubeconfig whose API server is not there (a loopback port bound, then closed),
 * for unit tests of what the manager does without a cluster (retries, readiness, stopping).
 * @module
 */
import { createServer } from 'node:net';
import { KubeConfig } from '../kubeconfig/index.ts';

/** A port nothing listens on (bound, then closed). */
export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

/** A kubeconfig pointing at `https://127.0.0.1:<port>`, with a token nobody checks. */
export function unreachableKubeConfig(port: number): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'nowhere', server: `https://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'nobody', token: 'not-a-token' }],
    contexts: [{ name: 'nowhere', cluster: 'nowhere', user: 'nobody' }],
    currentContext: 'nowhere',
  });
  return kc;
}
