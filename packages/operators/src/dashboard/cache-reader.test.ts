/**
 * The dashboard's reader of `converge explain`'s facts, over a cluster source's cache (never
 * started: the objects are noted as if this process had written them, no request is made).
 * events.k8s.io Events need not sit in the namespace of what they regard: whoever may create
 * Events in namespace `b` could otherwise put text on the panel of an object in `a`. An Event
 * counts for an object only when it is in the object's namespace, as in the CLI's reader
 * (`clientReader` asks the API server for that namespace's Events).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventKind } from '@converge/runtime';
import type { KubeEvent } from '@converge/runtime';
import { ClusterSource } from './cluster-source.ts';
import { DashboardModel } from './model.ts';
import { cacheReader } from './cache-reader.ts';
import { unreachableKubeConfig } from '../operators/unreachable-cluster.test-support.ts';

const nowhere = unreachableKubeConfig;

function event(namespace: string, name: string, regardingUid: string): KubeEvent {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { namespace, name, uid: `e-${namespace}-${name}`, resourceVersion: '1' },
    eventTime: '2026-12-05T10:00:00.000000Z',
    reason: 'Hello',
    note: `written in ${namespace}`,
    type: 'Normal',
    action: 'Test',
    reportingController: 'someone',
    reportingInstance: 'someone-1',
    regarding: { apiVersion: 'platform.example.io/v1', kind: 'Microservice', namespace: 'a', name: 'svc', uid: regardingUid },
  } as KubeEvent;
}

describe('cacheReader', () => {
  it('an Event in namespace b regarding an object of namespace a is not that object\'s Event', async () => {
    const source = new ClusterSource({ name: 'east', kubeConfig: nowhere() }, new DashboardModel());
    source.cache.informer(EventKind).noteWrite(event('b', 'planted', 'u'));
    const reader = cacheReader(source.cache);
    assert.deepEqual(await reader.eventsRegarding('a', ['u']), []);
    assert.deepEqual((await reader.eventsRegarding('b', ['u'])).map((e) => e.metadata.name), ['planted']);
  });

  it('Events in the object\'s namespace are returned, for each UID asked', async () => {
    const source = new ClusterSource({ name: 'east', kubeConfig: nowhere() }, new DashboardModel());
    const events = source.cache.informer(EventKind);
    for (const e of [event('a', 'one', 'u'), event('a', 'two', 'v'), event('b', 'planted', 'u'), event('a', 'other', 'w')]) events.noteWrite(e);
    const names = (await cacheReader(source.cache).eventsRegarding('a', ['u', 'v', ''])).map((e) => e.metadata.name).sort();
    assert.deepEqual(names, ['one', 'two']);
  });
});
