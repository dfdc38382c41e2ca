import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '@converge/runtime';
import { describePodProblems, podProblems, MAX_CAUSES, MAX_MESSAGE } from './pod-problems.ts';

type Status = NonNullable<Pod['status']>;
const pod = (name: string, status: Status, deleting = false): Pod => ({
  metadata: { name, namespace: 'demo', ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  status,
});
const ready: Status = { conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'app', ready: true, restartCount: 0, image: 'x', imageID: 'x', state: { running: {} } }] };
const waiting = (reason: string, message?: string, extra: Partial<NonNullable<Status['containerStatuses']>[number]> = {}): Status => ({
  conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Ready', status: 'False' }],
  containerStatuses: [{ name: 'app', ready: false, restartCount: 0, image: 'x', imageID: '', state: { waiting: { reason, ...(message ? { message } : {}) } }, ...extra }],
});

test('all pods ready, or none: nothing to say', () => {
  assert.equal(podProblems([]), undefined);
  assert.equal(podProblems([pod('a', ready), pod('b', ready)]), undefined);
});

test('an image that cannot be pulled is named with the kubelet message, counted once per cause', () => {
  const p = podProblems([pod('a', waiting('ErrImagePull', 'pull access denied for example.com/todo:fail')), pod('b', waiting('ErrImagePull', 'pull access denied for example.com/todo:fail')), pod('c', ready)]);
  assert.deepEqual(p, { pods: 3, notReady: 2, causes: ['container app: ErrImagePull — pull access denied for example.com/todo:fail (2 pods)'] });
  assert.equal(describePodProblems(p!), '2/3 pods not ready: container app: ErrImagePull — pull access denied for example.com/todo:fail (2 pods)');
});

test('a crash loop says the last exit; a running container that is not ready names its readiness probe; an unschedulable pod says so', () => {
  const crash = waiting('CrashLoopBackOff', 'back-off 40s restarting failed container', { restartCount: 3, lastState: { terminated: { exitCode: 2, reason: 'Error' } } });
  const probe: Status = { conditions: [{ type: 'Ready', status: 'False' }], containerStatuses: [{ name: 'app', ready: false, restartCount: 1, image: 'x', imageID: 'x', state: { running: {} } }] };
  const pending: Status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available: 3 Insufficient cpu.' }] };
  assert.deepEqual(podProblems([pod('a', crash), pod('b', probe), pod('c', pending)])!.causes, [
    'container app: CrashLoopBackOff — back-off 40s restarting failed container (last exit 2, Error)',
    'container app: running but not ready (its readiness probe fails; 1 restart)',
    'not scheduled: Unschedulable — 0/3 nodes are available: 3 Insufficient cpu.',
  ]);
});

test('bounded: pods being deleted are left out, causes at most MAX_CAUSES, messages cut', () => {
  assert.equal(podProblems([pod('old', waiting('ErrImagePull'), true)]), undefined);
  const many = Array.from({ length: 6 }, (_, i) => pod(`p${i}`, waiting(`Reason${i}`, 'x'.repeat(1000))));
  const p = podProblems(many)!;
  assert.equal(p.notReady, 6);
  assert.equal(p.causes.length, MAX_CAUSES);
  assert.ok(p.causes.every((c) => c.length < MAX_MESSAGE + 40), p.causes.join('\n'));
  assert.equal(describePodProblems({ pods: 1, notReady: 1, causes: [] }), '1/1 pod not ready (their status says nothing more yet)');
});

test('a message is cut between characters, never through a surrogate pair', () => {
  // Found by views.property.test.ts: MAX_MESSAGE - 1 UTF-16 units of astral characters (emoji,
  // U+10000 …) ended in half a character, printed as U+FFFD and sent as a lone surrogate in -o json.
  const message = '😀'.repeat(MAX_MESSAGE + 1);
  const p = podProblems([pod('a', waiting('ErrImagePull', message))])!;
  const cause = p.causes[0]!;
  assert.ok(cause.isWellFormed(), JSON.stringify(cause.slice(-20)));
  assert.equal(cause, `container app: ErrImagePull — ${'😀'.repeat(MAX_MESSAGE - 1)}…`);
});
