/**
 * The builder's wiring: a controller's event handlers are connected while it runs, not from the
 * moment it is built. A standby replica caches every kind but starts its controllers only once
 * it leads; before this, its queues took the key of every change it saw (deleted objects too)
 * and never gave one out: memory and `workqueue_depth` grew for as long as it stood by.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { ConfigMapKind, DeploymentKind } from '../objects/index.ts';
import type { ConfigMap, Deployment } from '../objects/index.ts';
import { Manager } from '../manager/index.ts';
import { closedPort, unreachableKubeConfig } from '../manager/unreachable-cluster.test-support.ts';

const log = pino({ level: 'silent' });

function configMap(i: number): ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'ns', name: `pr-${i}`, uid: `u${i}`, resourceVersion: String(10 + i) } };
}

function ownedDeployment(i: number): Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      namespace: 'ns', name: `d-${i}`, uid: `d${i}`, resourceVersion: String(5_000 + i),
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: `pr-${i}`, uid: `u${i}`, controller: true }],
    },
  };
}

describe('ControllerBuilder', () => {
  it('a controller that has not started (a standby replica) queues nothing, deleted objects included', async () => {
    const m = new Manager({ kubeConfig: unreachableKubeConfig(await closedPort()), log });
    const c = m.controller('cm')
      .for(ConfigMapKind)
      .owns(DeploymentKind)
      .watches(ConfigMapKind, (cm) => [{ namespace: 'ns', name: `mapped-${cm.metadata.name}` }])
      .complete(async () => ({}));
    const cms = m.cache.informer(ConfigMapKind);
    const deployments = m.cache.informer(DeploymentKind);
    for (let i = 0; i < 200; i++) {
      cms.noteWrite(configMap(i));
      deployments.noteWrite(ownedDeployment(i));
      deployments.noteDelete({ namespace: 'ns', name: `d-${i}` }, undefined, { uid: `d${i}` });
      cms.noteDelete({ namespace: 'ns', name: `pr-${i}` }, undefined, { uid: `u${i}` });
    }
    assert.equal(c.queue.len(), 0, 'no key queued while the controller does not run');
  });

  it('a running controller is woken by its kinds; once stopped, it is not', async () => {
    const m = new Manager({ kubeConfig: unreachableKubeConfig(await closedPort()), log });
    const reconciled: string[] = [];
    const c = m.controller('cm')
      .for(ConfigMapKind)
      .owns(DeploymentKind)
      .withOptions({ resyncPeriodMs: 0 })
      .complete(async (req) => void reconciled.push(req.key));
    const stop = new AbortController();
    const running = c.start(stop.signal);
    m.cache.informer(ConfigMapKind).noteWrite(configMap(1));
    m.cache.informer(DeploymentKind).noteWrite(ownedDeployment(2));
    for (let i = 0; i < 50 && reconciled.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(reconciled.sort(), ['ns/pr-1', 'ns/pr-2']);
    stop.abort();
    await running;
    m.cache.informer(ConfigMapKind).noteWrite(configMap(3));
    assert.equal(c.queue.len(), 0, 'nothing queued after the stop');
  });

  it('an update wakes the primaries of the old version as well as the new: a relabelled object, a child handed to another owner or orphaned', async () => {
    const m = new Manager({ kubeConfig: unreachableKubeConfig(await closedPort()), log });
    const reconciled = new Set<string>();
    const c = m.controller('cm')
      .for(ConfigMapKind)
      .owns(DeploymentKind)
      .watches(DeploymentKind, (d) => (d.metadata.labels?.bundle ? [{ namespace: 'ns', name: d.metadata.labels.bundle }] : []))
      .withOptions({ resyncPeriodMs: 0 })
      .complete(async (req) => void reconciled.add(req.key));
    const stop = new AbortController();
    const running = c.start(stop.signal);
    const deployments = m.cache.informer(DeploymentKind);
    const settle = async (want: string[]) => {
      for (let i = 0; i < 100 && !want.every((k) => reconciled.has(k)); i++) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 30));
      const got = [...reconciled].sort();
      reconciled.clear();
      return got;
    };
    const d = ownedDeployment(1); // controlled by pr-1
    deployments.noteWrite({ ...d, metadata: { ...d.metadata, labels: { bundle: 'a' } } });
    assert.deepEqual(await settle(['ns/a', 'ns/pr-1']), ['ns/a', 'ns/pr-1']);

    deployments.noteWrite({ ...d, metadata: { ...d.metadata, resourceVersion: '6001', labels: { bundle: 'b' } } });
    assert.deepEqual(await settle(['ns/a', 'ns/b']), ['ns/a', 'ns/b', 'ns/pr-1'], 'relabelled a → b: a drops it, b takes it');

    const other = { ...d.metadata.ownerReferences![0]!, name: 'pr-2', uid: 'u2' };
    deployments.noteWrite({ ...d, metadata: { ...d.metadata, resourceVersion: '6002', labels: { bundle: 'b' }, ownerReferences: [other] } });
    assert.deepEqual(await settle(['ns/pr-1', 'ns/pr-2']), ['ns/b', 'ns/pr-1', 'ns/pr-2'], 'handed from pr-1 to pr-2: both owners look');

    deployments.noteWrite({ ...d, metadata: { ...d.metadata, resourceVersion: '6003', labels: { bundle: 'b' }, ownerReferences: [] } });
    assert.deepEqual(await settle(['ns/pr-2']), ['ns/b', 'ns/pr-2'], 'orphaned: its last owner looks');
    stop.abort();
    await running;
  });

  it('a kind cached with a selector before the controller is built is watched as cached; declaring the selector after is refused with what to do', async () => {
    const m = new Manager({ kubeConfig: unreachableKubeConfig(await closedPort()), log });
    const labelled = m.cache.informer(DeploymentKind, { labelSelector: 'example.com/bundle' });
    m.controller('cm')
      .for(ConfigMapKind)
      .owns(DeploymentKind)
      .watches(DeploymentKind, () => [])
      .complete(async () => ({}));
    assert.equal(m.cache.informer(DeploymentKind), labelled, 'one informer, with its selector');
    assert.throws(() => m.cache.informer(ConfigMapKind, { labelSelector: 'x=y' }), /ConfigMap is already cached with other selectors.*declare it with its selectors before/);
  });

  it('in namespace mode, a kind may be cached from namespaces of its own (an operator reading its settings from where it runs)', async () => {
    const m = new Manager({ kubeConfig: unreachableKubeConfig(await closedPort()), log, namespaces: ['team-a'] });
    const settings = m.cache.informer(ConfigMapKind, { namespaces: ['operator-system'] });
    settings.noteWrite({ ...configMap(1), metadata: { ...configMap(1).metadata, namespace: 'operator-system', name: 'settings' } });
    settings.noteWrite({ ...configMap(2), metadata: { ...configMap(2).metadata, namespace: 'team-a', name: 'other' } });
    assert.deepEqual(m.cache.store(ConfigMapKind).list().map((c) => `${c.metadata.namespace}/${c.metadata.name}`), ['operator-system/settings']);
    assert.equal(m.cache.informer(DeploymentKind).store.list().length, 0);
    m.cache.informer(DeploymentKind).noteWrite({ ...ownedDeployment(1), metadata: { ...ownedDeployment(1).metadata, namespace: 'team-a' } });
    assert.equal(m.cache.store(DeploymentKind).list().length, 1, 'other kinds keep the manager\'s namespaces');
    assert.throws(() => m.cache.informer(ConfigMapKind, { namespaces: ['team-a'] }), /already cached with other/);
    // A controller's declaration (no namespaces: the manager's) must not get the narrower watch:
    // its children in team-a would never be seen, its own writes dropped.
    assert.throws(() => m.controller('cm').for(ConfigMapKind), /already cached with other/);
  });
});
