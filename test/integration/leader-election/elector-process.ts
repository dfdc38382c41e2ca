/**
 * A replica in its own process, for the SIGKILL test: runs a LeaderElector with the default
 * timings and prints one JSON line per leadership change. SIGTERM stops it gracefully.
 * Usage: node elector-process.ts <kubeconfig> <namespace> <lease> <identity>
 * @module
 */
import { KubeClient, loadKubeConfig } from '@converge/runtime';
import { LeaderElector } from '../../../packages/runtime/src/leader-election/index.ts';

const [kubeconfig, namespace, name, identity] = process.argv.slice(2) as [string, string, string, string];
const client = new KubeClient({ kubeConfig: loadKubeConfig(kubeconfig), userAgent: `elector/${identity}` });
const elector = new LeaderElector({
  client,
  namespace,
  name,
  identity,
  onLeaderChange: (leader, holder) => process.stdout.write(`${JSON.stringify({ leader, holder, at: Date.now() })}\n`),
});
const ac = new AbortController();
process.once('SIGTERM', () => ac.abort());
await elector.run(ac.signal);
await client.close();
