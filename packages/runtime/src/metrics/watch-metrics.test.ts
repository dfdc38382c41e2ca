/**
 * The watch gauges when one kind is watched twice (in full and metadata-only, or one Kind name in
 * two API groups): one series per kind and namespace, the worst of the watches sharing it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { WatchHealth } from '../cache/index.ts';
import { RuntimeMetrics } from './index.ts';

const watch = (over: Partial<WatchHealth>): WatchHealth => ({ kind: 'Secret', namespace: '', state: 'watching', synced: true, healthy: true, lastProgressAt: 0, lastProgressAgeMs: 1_000, restarts: 0, relists: 1, consecutiveFailures: 0, ...over }) as WatchHealth;

test('a failing watch of a kind is not hidden by a healthy watch of the same kind, whichever comes first', async () => {
  for (const order of [0, 1]) {
    const metrics = new RuntimeMetrics();
    const failing = watch({ healthy: false, lastProgressAgeMs: 600_000, consecutiveFailures: 7 });
    const fine = watch({});
    metrics.watchHealthFrom(() => (order ? [fine, failing] : [failing, fine]));
    const text = await metrics.registry.metrics();
    assert.match(text, /^converge_watch_healthy\{kind="Secret",namespace=""\} 0$/m);
    assert.match(text, /^converge_watch_last_event_age_seconds\{kind="Secret",namespace=""\} 600$/m);
  }
});

test('watches of one kind in different namespaces keep their own series', async () => {
  const metrics = new RuntimeMetrics();
  metrics.watchHealthFrom(() => [watch({ namespace: 'a', healthy: false }), watch({ namespace: 'b' })]);
  const text = await metrics.registry.metrics();
  assert.match(text, /^converge_watch_healthy\{kind="Secret",namespace="a"\} 0$/m);
  assert.match(text, /^converge_watch_healthy\{kind="Secret",namespace="b"\} 1$/m);
});
