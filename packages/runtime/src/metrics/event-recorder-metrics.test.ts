import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RuntimeMetrics } from './index.ts';

test('two event recorders in one process (two operators on one manager) are counted together, not refused', async () => {
  const metrics = new RuntimeMetrics();
  const stats = (n: number) => () => ({ created: n, seriesUpdates: 0, deduplicated: 0, dropped: n, failed: 0, gaveWay: n });
  metrics.eventRecorder(stats(2));
  metrics.eventRecorder(stats(3));
  const text = await metrics.registry.metrics();
  assert.match(text, /converge_events_total\{outcome="created"\} 5/);
  assert.match(text, /converge_events_total\{outcome="dropped"\} 5/);
  assert.match(text, /converge_events_gave_way_total 5/);
});
