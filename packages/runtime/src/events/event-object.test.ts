import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { microTime, truncateUtf8, referenceOf, MAX_NOTE_BYTES } from './index.ts';
import { eventObject, withSeries, MAX_FIELD_BYTES } from './event-object.ts';

describe('event object', () => {
  it('microTime has exactly six fractional digits', () => {
    assert.equal(microTime(Date.UTC(2024, 0, 2, 3, 4, 5, 678)), '2024-01-02T03:04:05.678000Z');
    assert.equal(microTime(Date.UTC(2024, 0, 2, 3, 4, 5, 678) + 0.25), '2024-01-02T03:04:05.678250Z');
    assert.match(microTime(Date.now()), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it('truncateUtf8 keeps whole characters within the byte limit', () => {
    assert.equal(truncateUtf8('short', MAX_NOTE_BYTES), 'short');
    const long = 'x'.repeat(2000);
    assert.equal(Buffer.byteLength(truncateUtf8(long, MAX_NOTE_BYTES)), 1024);
    const multi = 'é'.repeat(600); // 2 bytes each
    const cut = truncateUtf8(multi, 1023);
    assert.equal(Buffer.byteLength(cut), 1022);
    assert.ok(!cut.includes('\uFFFD'));
    const emoji = 'a' + '😀'.repeat(10); // 4 bytes each, surrogate pairs
    assert.equal(truncateUtf8(emoji, 7), 'a😀');
  });

  it('referenceOf takes the reference fields of an object or a reference', () => {
    assert.deepEqual(
      referenceOf({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns', uid: 'u1', resourceVersion: '7', labels: { x: 'y' } } }),
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'a', namespace: 'ns', uid: 'u1', resourceVersion: '7' },
    );
    assert.deepEqual(referenceOf({ metadata: { name: 'n1' } }), { name: 'n1' });
    assert.deepEqual(referenceOf({ kind: 'Node', apiVersion: 'v1', name: 'n1' }), { kind: 'Node', apiVersion: 'v1', name: 'n1' });
  });

  it('eventObject stays within the API server limits, in default for cluster-scoped objects, with names unique within a millisecond', () => {
    const content = {
      type: 'Warning' as const,
      regarding: { apiVersion: 'v1', kind: 'Node', name: 'n'.repeat(253) },
      reason: 'R'.repeat(300),
      action: 'A'.repeat(300),
      note: undefined,
      reportingController: 'converge.dev/test',
      reportingInstance: 'pod-1',
    };
    const now = Date.UTC(2026, 11, 5, 1, 2, 3, 4);
    const a = eventObject(content, now, 0);
    const b = eventObject(content, now, 1);
    assert.ok((a.metadata.name ?? '').length <= 253);
    assert.notEqual(a.metadata.name, b.metadata.name);
    assert.equal(a.metadata.namespace, 'default');
    assert.equal(a.reason.length, MAX_FIELD_BYTES);
    assert.equal(a.action.length, MAX_FIELD_BYTES);
    // The API server counts bytes: 64 two-byte characters fill the limit, a 65th would break it.
    const wide = eventObject({ ...content, reason: 'é'.repeat(100), action: `${'é'.repeat(63)}😀` }, now, 3);
    assert.equal(Buffer.byteLength(wide.reason), 128);
    assert.equal(wide.reason, 'é'.repeat(64));
    assert.equal(wide.action, 'é'.repeat(63), 'cut at a character boundary: the emoji does not fit whole, and is not split');
    assert.equal(a.eventTime, microTime(now));
    assert.ok(!('note' in a));
    const namespaced = eventObject({ ...content, type: 'Normal', regarding: { name: 'web', namespace: 'team-a' }, note: 'hello' }, now, 2);
    assert.equal(namespaced.metadata.namespace, 'team-a');
    assert.equal(namespaced.note, 'hello');
    assert.match(namespaced.metadata.name ?? '', /^web\.[0-9a-f]+$/);
    assert.deepEqual(withSeries(namespaced, 3, now).series, { count: 3, lastObservedTime: microTime(now) });
  });
});

describe('event names', () => {
  it('an Event about an object with a long name still has a valid name: the cut ends with a letter or digit', () => {
    const content = { type: 'Normal' as const, reason: 'R', action: 'A', note: undefined, reportingController: 'converge.dev/test', reportingInstance: 'pod-1' };
    const dns = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
    for (const name of [`${'a'.repeat(235)}-b`, `${'a'.repeat(235)}.b`, `${'a-'.repeat(118)}bbb`, 'short']) {
      const event = eventObject({ ...content, regarding: { name, namespace: 'ns' } }, Date.UTC(2026, 11, 5), 0);
      assert.ok((event.metadata.name ?? '').length <= 253);
      assert.match(event.metadata.name ?? '', dns, name);
    }
  });
});
