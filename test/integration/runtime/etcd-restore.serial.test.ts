/**
 * The cache across a real etcd restore: the control plane's etcd is backed up (cold copy of its
 * data), objects change, and the backup is restored as an operator restores a cluster (every
 * component stopped, etcd's data replaced, components started again). resourceVersions go back
 * to the backup's. A cache that resumed its watch from the version it had seen would wait for
 * the new history to pass it, and then miss every change in between: the object created after
 * the backup would stay in it for good (a ghost), changes after the restore would not show.
 *
 * Serial: the whole shared control plane goes back to the backup (taken and restored within this
 * test, so only this test's changes are undone), and its controllers are restarted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Cache, ConfigMapKind, KubeClient, loadKubeConfig } from '@converge/runtime';
import type { ConfigMap } from '@converge/runtime';
import { testCluster } from '../../support/cluster.ts';
import { eventually, kubeconfigPath, testClient, testLogger, testNamespace } from '../../support/operator-harness.ts';

test('after etcd is restored from a backup, the cache drops what the backup does not have and follows the new history', { timeout: 300_000 }, async (t) => {
  const cluster = await testCluster();
  const client = testClient();
  const ns = await testNamespace(t, client, 'etcd-restore');
  await client.create(ConfigMapKind, { metadata: { name: 'kept', namespace: ns }, data: { v: 'before-backup' } });

  const watching = new KubeClient({ kubeConfig: loadKubeConfig(kubeconfigPath()), qps: 0 });
  const restarts: string[] = [];
  const cache = new Cache({ client: watching, namespaces: [ns], log: testLogger(), onRestart: (_kind, reason) => restarts.push(reason) });
  cache.informer(ConfigMapKind);
  const abort = new AbortController();
  const running = cache.start(abort.signal);
  t.after(async () => {
    abort.abort();
    await running;
    await watching.close();
  });
  await cache.waitForSync();
  const cached = (name: string) => cache.get(ConfigMapKind, `${ns}/${name}`) as ConfigMap | undefined;

  await cluster.backupEtcd();
  const backupRestarts = restarts.length;
  await client.create(ConfigMapKind, { metadata: { name: 'ghost', namespace: ns }, data: { v: 'after-backup' } });
  const kept = await client.get(ConfigMapKind, { namespace: ns, name: 'kept' });
  await client.replace(ConfigMapKind, { ...kept, data: { v: 'after-backup' } });
  await eventually(() => cached('ghost') && cached('kept')?.data?.v === 'after-backup', { what: 'the changes after the backup cached', timeoutMs: 30_000 });

  await cluster.restoreEtcd();
  const restored = await client.get(ConfigMapKind, { namespace: ns, name: 'kept' });
  assert.equal(restored.data?.v, 'before-backup', 'the API server serves the backup');
  await assert.rejects(client.get(ConfigMapKind, { namespace: ns, name: 'ghost' }), /not found/);
  await client.replace(ConfigMapKind, { ...restored, data: { v: 'after-restore' } });

  await eventually(() => !cached('ghost') && cached('kept')?.data?.v === 'after-restore', { what: 'the cache on the restored history', timeoutMs: 90_000 }).catch((err: Error) => {
    throw new Error(`${err.message}: ghost ${cached('ghost') ? 'still cached' : 'gone'}, kept = ${cached('kept')?.data?.v}; watch restarts ${restarts.slice(backupRestarts).join(', ')}`);
  });
  t.diagnostic(`watch restarts after the backup: ${restarts.slice(backupRestarts).join(', ')}`);
});
