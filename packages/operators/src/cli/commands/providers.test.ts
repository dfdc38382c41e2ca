import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DigitalHumanProvider } from '../../operators/provider/api/index.ts';
import { providerItem } from '../../dashboard/items.ts';
import { ApiError } from '@converge/runtime';
import { listFailure, pickProviders, renderProviderPick } from './providers.ts';

const at = '2026-01-01T00:00:00Z';
function dhp(name: string, region: string, over: { quotaRemaining?: number; reason?: string; ready?: 'True' | 'False'; limitedBy?: string; since?: string } = {}): DigitalHumanProvider {
  const ready = over.ready ?? 'True';
  return {
    metadata: { name, namespace: 'ns', generation: 1, finalizers: ['dhp.example.com/provider-cleanup'], creationTimestamp: at },
    spec: { endpoint: 'https://v', region, credentials: { secretRef: { name: 's' } } },
    status: {
      observedGeneration: 1,
      providerID: `inst-${name}`,
      usable: ready === 'True',
      ...(over.limitedBy ? { limitedBy: over.limitedBy } : {}),
      usage: { callsToday: 0, dailyQuota: 1000, quotaRemaining: over.quotaRemaining ?? 1000, throttledRequests: 0, throttleWindowSeconds: 60, quotaResetAt: at, observedAt: at },
      conditions: [{ type: 'Ready', status: ready, reason: over.reason ?? 'ProviderReady', message: '', observedGeneration: 1, lastTransitionTime: over.since ?? at }],
    },
  };
}

test('the pick: usable providers of the region, best first, in the dashboard order', () => {
  const items = [
    dhp('low', 'eu', { quotaRemaining: 100 }),
    dhp('high', 'eu', { quotaRemaining: 900 }),
    dhp('degraded', 'eu', { quotaRemaining: 1000, reason: 'ProviderDegraded' }),
    dhp('throttled', 'eu', { quotaRemaining: 1000, limitedBy: 'RateLimited' }),
    dhp('out', 'eu', { quotaRemaining: 0, ready: 'False', reason: 'QuotaExhausted', limitedBy: 'QuotaExhausted' }),
    dhp('elsewhere', 'ap'),
  ].map((p) => providerItem('c', p, true, at));
  assert.deepEqual(pickProviders(items, { region: 'eu' }).map((i) => i.name), ['high', 'low', 'throttled', 'degraded']);
  assert.deepEqual(pickProviders(items, { region: 'eu', all: true }).map((i) => i.name).at(-1), 'out');
  assert.equal(pickProviders(items).length, 5);
  assert.match(renderProviderPick(pickProviders(items, { region: 'eu' })), /RANK\s+NAMESPACE\s+NAME\s+REGION\s+USABLE\s+QUOTA-LEFT\s+LIMITED-BY\s+REASON\n1\s+ns\s+high\s+eu\s+yes\s+900/);
  assert.match(renderProviderPick([]), /no usable DigitalHumanProvider/);
});

test('the pick prints no terminal control from the cluster (a region or a status message)', () => {
  const hostile = '\u001b]52;c;cm0gLXJmIH4=\u0007\u009b2J\u202e';
  const items = [dhp('x', `eu${hostile}`, { ready: 'False', reason: `Broken${hostile}` })].map((p) => providerItem('c', p, true, at));
  const text = renderProviderPick(pickProviders(items, { all: true }), true).replace(/\u001b\[[0-9;]*m/g, '');
  // eslint-disable-next-line no-control-regex
  assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/.test(text), JSON.stringify(text));
  assert.match(text, /eu\\u001b\]52/);
});

test('a cluster without the CRD: the message names it and how to install it, as converge status does', () => {
  const missing = new ApiError({ reason: 'NotFound', code: 404, message: 'the server could not find the requested resource' });
  assert.equal(listFailure(missing), 'the DigitalHumanProvider CRD (digitalhumanproviders.dhp.example.com) is not installed; install it with `converge crds --apply`');
  assert.match(listFailure(new ApiError({ reason: 'Forbidden', code: 403, message: 'forbidden' })), /^cannot list DigitalHumanProviders: forbidden$/);
});
