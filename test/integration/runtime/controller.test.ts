/**
 * The runtime on a real API server, through the example ConfigMap-mirror operator: objects
 * created before and after start converge, a child's change enqueues its owner, a converged
 * object costs no write, a reconcile never sees an older version than its own write, and
 * shutdown drains in-flight work.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigMapKind, isNotFound } from '@converge/runtime';
import type { ConfigMap, KubeClient } from '@converge/runtime';
import { registerConfigMapMirror, MIRROR_LABEL } from '../../../examples/configmap-mirror/index.ts';
import { testClient, testNamespace, startManager, eventually, sleep } from '../../support/operator-harness.ts';

const source = (namespace: string, name: string, data: Record<string, string>): ConfigMap => ({
  metadata: { name, namespace, labels: { [MIRROR_LABEL]: 'true' } },
  data,
});

async function mirrorOf(client: KubeClient, namespace: string, name: string): Promise<ConfigMap | undefined> {
  try {
    return await client.get(ConfigMapKind, { namespace, name: `${name}-mirror` });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

test('converges objects created before and after start; repairs children; no writes when converged', async (t) => {
  const client = testClient();
  const ns = await testNamespace(t, client);
  await client.create(ConfigMapKind, source(ns, 'before', { a: '1' }));
  let writes = 0;
  const { manager } = await startManager(t, {
    namespaces: [ns],
    controllerDefaults: { resyncPeriodMs: 500 },
    configure: registerConfigMapMirror,
  });
  manager.client.observe({ onRequest: (r) => { if (r.verb !== 'get' && r.verb !== 'list' && r.verb !== 'watch') writes++; } });

  await eventually(async () => (await mirrorOf(client, ns, 'before'))?.data?.a === '1', { what: 'mirror of a pre-existing object' });
  await client.create(ConfigMapKind, source(ns, 'after', { b: '2' }));
  await eventually(async () => (await mirrorOf(client, ns, 'after'))?.data?.b === '2', { what: 'mirror of a new object' });

  // A child's change enqueues its owner: edit the mirror by hand, and delete it.
  const mirror = (await mirrorOf(client, ns, 'after'))!;
  await client.replace(ConfigMapKind, { ...mirror, data: { b: 'tampered' } });
  await eventually(async () => (await mirrorOf(client, ns, 'after'))?.data?.b === '2', { what: 'drift reverted' });
  const uidBefore = (await mirrorOf(client, ns, 'after'))!.metadata.uid;
  await client.delete(ConfigMapKind, { namespace: ns, name: 'after-mirror' });
  await eventually(async () => {
    const m = await mirrorOf(client, ns, 'after');
    return m && m.metadata.uid !== uidBefore;
  }, { what: 'deleted child recreated' });

  // Converged: several periodic checks (every ~500 ms) and no write.
  await sleep(300);
  const before = writes;
  await sleep(2_000);
  assert.equal(writes - before, 0, 'a converged object costs zero writes on resync');
});

test('a reconcile never sees an older version than its own write', async (t) => {
  const client = testClient();
  const ns = await testNamespace(t, client);
  await client.create(ConfigMapKind, { metadata: { name: 'counter', namespace: ns }, data: { n: '0' } });
  const seen: number[] = [];
  let stale = 0;
  const { manager } = await startManager(t, {
    namespaces: [ns],
    controllerDefaults: { resyncPeriodMs: 0 },
    configure: (m) => {
      const store = m.cache.informer(ConfigMapKind).store;
      let lastWritten = -1;
      m.controller('counter')
        .for(ConfigMapKind)
        .complete(async (req) => {
          if (req.name !== 'counter') return {};
          const cm = store.get(req.key)!;
          const n = Number(cm.data?.n);
          if (n < lastWritten) stale++;
          seen.push(n);
          if (n >= 20) return {};
          // Each write is followed at once by another reconcile of the same key (requeue):
          // without read-your-own-writes, it would often read the previous version.
          const updated = await m.client.replace(ConfigMapKind, { ...cm, data: { n: String(n + 1) } });
          lastWritten = Number(updated.data?.n);
          return { requeue: true };
        });
    },
  });
  await eventually(async () => (await client.get(ConfigMapKind, { namespace: ns, name: 'counter' })).data?.n === '20', { what: 'counter reaches 20' });
  assert.equal(stale, 0, `reconciles saw stale versions: ${seen.join(',')}`);
  void manager;
});

test('shutdown lets in-flight reconciles finish', async (t) => {
  const client = testClient();
  const ns = await testNamespace(t, client);
  await client.create(ConfigMapKind, { metadata: { name: 'slow', namespace: ns } });
  let started = false;
  let finished = false;
  const { stop } = await startManager(t, {
    namespaces: [ns],
    configure: (m) => {
      m.controller('slow')
        .for(ConfigMapKind)
        .complete(async (req) => {
          if (req.name !== 'slow' || started) return {};
          started = true;
          await sleep(1_000);
          finished = true;
          return {};
        });
    },
  });
  await eventually(() => started, { what: 'reconcile started' });
  await stop();
  assert.equal(finished, true, 'stop() waited for the in-flight reconcile');
});
