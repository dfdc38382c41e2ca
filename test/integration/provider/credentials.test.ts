/**
 * The provider operator's Secrets (issue 12, item 10): watched by metadata only, so a large
 * Secret nobody names (a Helm release) never reaches the operator's memory or network; the
 * referenced Secret is read on demand, once per version — a converged provider costs no GET —
 * and read again when it changes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SecretKind } from '@converge/runtime';
import { DigitalHumanProviderKind } from '../../../packages/operators/src/operators/provider/index.ts';
import { eventually, sleep } from '../../support/operator-harness.ts';
import { setupProviders, provider, waitFor, isReady, ready, instancesOf } from './support.ts';

test('Secrets by metadata only: unrelated data is never downloaded; the token costs one GET per Secret version', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t, { healthIntervalSeconds: 1, faults: { split: 1, maxPieces: 3 } });
  const proxy = env.proxy!;
  const gets: string[] = [];
  env.manager().client.observe({ onRequest: (r) => { if (r.verb === 'get' && r.resource === 'secrets') gets.push(r.resource); } });
  const release = Buffer.alloc(500_000, 'r').toString('base64');
  await env.client.create(SecretKind, { metadata: { name: 'sh.helm.release.v1.big.v1', namespace: env.ns, labels: { owner: 'helm' } }, type: 'helm.sh/release.v1', data: { release } });
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'creds-on-demand', env.sim.baseUrl));
  await waitFor(env.client, env.ns, 'creds-on-demand', isReady, 'Ready');
  await eventually(() => env.manager().cache.metadataStore(SecretKind).get(`${env.ns}/sh.helm.release.v1.big.v1`), { what: 'the Helm Secret in the metadata cache' });
  const full = proxy.stats().bytes.secrets ?? 0;
  assert.ok(full < 20_000, `${full} bytes of whole Secrets downloaded (the 670 KB Helm Secret must not be)`);
  assert.ok((proxy.stats().bytes['secrets (metadata)'] ?? 0) > 0, 'Secrets are watched by metadata');
  assert.ok(gets.length >= 1, 'the token was read with a GET');

  // Converged: several health checks (every second), no GET.
  const before = gets.length;
  await sleep(4_000);
  assert.equal(gets.length - before, 0, 'a steady state costs no GET of the Secret');

  // A new version of the Secret is read again, and the provider stays Ready.
  await env.client.patch(SecretKind, { namespace: env.ns, name: 'creds' }, { type: 'merge', body: { metadata: { labels: { rotated: 'yes' } } } });
  await eventually(() => gets.length > before, { timeoutMs: 15_000, what: 'the changed Secret read again' });
  await waitFor(env.client, env.ns, 'creds-on-demand', isReady, 'still Ready');
});

test('a Secret must opt in with the vendor-credentials label: unlabelled, nothing is read or sent (CredentialsNotAllowed, Stalled); labelled, the provider goes on', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t, { faults: { split: 0 } });
  let gets = 0; // no provider names the env's own Secret here: any GET of a Secret would be of this one
  env.manager().client.observe({ onRequest: (r) => { if (r.verb === 'get' && r.resource === 'secrets') gets++; } });
  const requests = () => Object.values(env.sim.stats().requests).reduce((a, b) => a + b, 0);
  // The same valid token, in a Secret that did not opt in.
  await env.client.create(SecretKind, { metadata: { name: 'plain', namespace: env.ns }, stringData: { token: env.token } });
  const before = requests();
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'opt-in', env.sim.baseUrl, { credentials: { secretRef: { name: 'plain' } } }));
  const refused = await waitFor(env.client, env.ns, 'opt-in', (d) => ready(d)?.reason === 'CredentialsNotAllowed', 'CredentialsNotAllowed');
  assert.match(ready(refused)!.message ?? '', new RegExp(`kubectl -n ${env.ns} label secret plain dhp\\.example\\.com/vendor-credentials=true`));
  assert.equal(refused.status?.conditions?.find((c) => c.type === 'Stalled')?.status, 'True');
  assert.equal(gets, 0, 'the Secret\'s data was never fetched');
  assert.equal(requests(), before, 'nothing reached the vendor');
  assert.equal(instancesOf(env.sim, refused).length, 0);

  await env.client.patch(SecretKind, { namespace: env.ns, name: 'plain' }, { type: 'merge', body: { metadata: { labels: { 'dhp.example.com/vendor-credentials': 'true' } } } });
  await waitFor(env.client, env.ns, 'opt-in', isReady, 'Ready once the Secret is labelled');
});

test('an endpoint outside provider.vendor.allowedEndpoints: EndpointNotAllowed (Stalled), the Secret never read, nothing sent, and its deletion needs no vendor', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t, { faults: { split: 0 }, vendor: { allowedEndpoints: ['https://vendor.allowed.example'] } });
  let gets = 0;
  env.manager().client.observe({ onRequest: (r) => { if (r.verb === 'get' && r.resource === 'secrets') gets++; } });
  const requests = () => Object.values(env.sim.stats().requests).reduce((a, b) => a + b, 0);
  const before = requests();
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'elsewhere', env.sim.baseUrl));
  const refused = await waitFor(env.client, env.ns, 'elsewhere', (d) => ready(d)?.reason === 'EndpointNotAllowed', 'EndpointNotAllowed');
  assert.match(ready(refused)!.message ?? '', /provider\.vendor\.allowedEndpoints: https:\/\/vendor\.allowed\.example/);
  assert.equal(refused.status?.conditions?.find((c) => c.type === 'Stalled')?.status, 'True');
  assert.equal(gets, 0, 'the Secret was not read');
  assert.equal(requests(), before, 'nothing reached the vendor');
  // Deleting it needs no vendor call (nothing was ever sent): the finalizer goes.
  await env.client.delete(DigitalHumanProviderKind, { namespace: env.ns, name: 'elsewhere' });
  await eventually(async () => (await env.client.get(DigitalHumanProviderKind, { namespace: env.ns, name: 'elsewhere' }).then(() => false, () => true)), { timeoutMs: 30_000, what: 'deleted' });
  assert.equal(gets, 0, 'the deletion did not read the Secret either');
  assert.equal(requests(), before, 'nor call the vendor');
});
