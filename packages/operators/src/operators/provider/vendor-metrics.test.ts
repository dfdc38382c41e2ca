import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { registerVendorMetrics } from './vendor-metrics.ts';

test('vendor calls are counted by operation and outcome; recovery state is read at scrape time', async () => {
  const registry = new Registry();
  let stats = { blocked: 0, downEndpoints: 0, woken: 0 };
  const metrics = registerVendorMetrics(registry, { stats: () => stats });
  metrics.call({ operation: 'deleteInstance', outcome: 'ok', status: 204, durationMs: 20 });
  metrics.call({ operation: 'deleteInstance', outcome: 'Network', status: 0, durationMs: 3 });
  metrics.call({ operation: 'deleteInstance', outcome: 'Network', status: 0, durationMs: 4 });
  stats = { blocked: 7, downEndpoints: 1, woken: 12 };
  const text = await registry.metrics();
  assert.match(text, /converge_vendor_requests_total\{operation="deleteInstance",outcome="ok"\} 1/);
  assert.match(text, /converge_vendor_requests_total\{operation="deleteInstance",outcome="Network"\} 2/);
  assert.match(text, /converge_vendor_request_duration_seconds_count\{operation="deleteInstance"\} 3/);
  assert.match(text, /converge_vendor_endpoints_down 1/);
  assert.match(text, /converge_vendor_waiting_objects 7/);
  assert.match(text, /converge_vendor_recovery_wakes_total 12/);
  stats = { blocked: 0, downEndpoints: 0, woken: 15 };
  assert.match(await registry.metrics(), /converge_vendor_recovery_wakes_total 15/);
});

test('every vendor series exists from the start, at zero, for every operation', async () => {
  const registry = new Registry();
  registerVendorMetrics(registry, { stats: () => ({ blocked: 0, downEndpoints: 0, woken: 0 }) });
  const text = await registry.metrics();
  for (const operation of ['createInstance', 'getInstance', 'findByIdempotencyKey', 'updateInstance', 'deleteInstance', 'getHealth']) {
    assert.match(text, new RegExp(`converge_vendor_requests_total\\{operation="${operation}",outcome="ok"\\} 0`));
    assert.match(text, new RegExp(`converge_vendor_request_duration_seconds_count\\{operation="${operation}"\\} 0`));
  }
  assert.match(text, /converge_vendor_endpoints_down 0/);
  assert.match(text, /converge_vendor_waiting_objects 0/);
  assert.match(text, /converge_vendor_recovery_wakes_total 0/);
  assert.match(text, /^converge_vendor_late_create_keys NaN$/im, 'not known before the ledger is read');
});

test('the late-create keys are read from the sweep at scrape time', async () => {
  const registry = new Registry();
  const metrics = registerVendorMetrics(registry, { stats: () => ({ blocked: 0, downEndpoints: 0, woken: 0 }) });
  let keys: number | undefined = 3;
  metrics.lateCreateKeysFrom(() => keys);
  assert.match(await registry.metrics(), /^converge_vendor_late_create_keys 3$/m);
  keys = 0;
  assert.match(await registry.metrics(), /^converge_vendor_late_create_keys 0$/m);
  keys = undefined; // the ledger not read (yet)
  assert.match(await registry.metrics(), /^converge_vendor_late_create_keys NaN$/im);
});
