import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Deployment } from '@converge/runtime';
import { GENERATION_ANNOTATION } from './api/index.ts';
import { assessRollout } from './rollout.ts';

function dep(opts: { stamp?: string; generation?: number; observed?: number; replicas?: number; updated?: number; available?: number; current?: number; progressing?: { status: string; reason: string } }): Deployment {
  return {
    metadata: { name: 'a', generation: opts.generation ?? 1, annotations: opts.stamp === undefined ? {} : { [GENERATION_ANNOTATION]: opts.stamp } },
    spec: { replicas: opts.replicas ?? 2, selector: {}, template: {} },
    status: {
      observedGeneration: opts.observed ?? 1,
      replicas: opts.current ?? opts.replicas ?? 2,
      updatedReplicas: opts.updated ?? 2,
      availableReplicas: opts.available ?? 2,
      ...(opts.progressing ? { conditions: [{ type: 'Progressing', ...opts.progressing }] } : {}),
    },
  } as Deployment;
}

test('available only when this generation rolled out fully and endpoints are ready', () => {
  assert.equal(assessRollout(dep({ stamp: '3' }), 3, 2).state, 'Available');
  assert.equal(assessRollout(dep({ stamp: '3' }), 3, 0).state, 'EndpointsNotReady');
});

test('an old generation, an unobserved spec or old pods never read as success', () => {
  assert.equal(assessRollout(dep({ stamp: '2' }), 3, 2).state, 'InProgress', 'Deployment written for an older CR generation');
  assert.equal(assessRollout(dep({ stamp: '3', generation: 4, observed: 3 }), 3, 2).state, 'InProgress', 'controller has not observed the spec');
  assert.equal(assessRollout(dep({ stamp: '3', updated: 1 }), 3, 2).state, 'InProgress');
  assert.equal(assessRollout(dep({ stamp: '3', current: 3 }), 3, 2).state, 'InProgress', 'old pods still around');
  const a = assessRollout(dep({ stamp: '3', available: 1 }), 3, 2);
  assert.equal(a.state, 'InProgress');
  assert.deepEqual(a.summary, { replicas: 2, updatedReplicas: 2, availableReplicas: 1, readyEndpoints: 2 });
});

test('ProgressDeadlineExceeded is a stall', () => {
  const a = assessRollout(dep({ stamp: '1', available: 0, progressing: { status: 'False', reason: 'ProgressDeadlineExceeded' } }), 1, 0);
  assert.equal(a.state, 'Stalled');
});
