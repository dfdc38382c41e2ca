/** The allowed-endpoints list: origins and path prefixes on a path boundary, nothing by look-alike. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { allowedEndpointProblems, endpointAllowed } from './allowed-endpoints.ts';
import { endpointNotAllowedMessage } from './endpoint-not-allowed.ts';
import type { DigitalHumanProvider } from './api/schema-free.ts';

test('an empty list allows every endpoint', () => {
  assert.equal(endpointAllowed([], 'https://anywhere.example/x'), true);
});

test('an origin allows itself and what is under it, and nothing that only looks like it', () => {
  const list = ['https://api.vendor.example'];
  for (const ok of ['https://api.vendor.example', 'https://api.vendor.example/', 'https://API.Vendor.example/v2', 'https://api.vendor.example:443/v2/']) assert.equal(endpointAllowed(list, ok), true, ok);
  for (const no of ['https://api.vendor.example.evil.test', 'https://api.vendor.example:8443', 'http://api.vendor.example', 'https://evil.test/api.vendor.example', 'https://x@api.vendor.example.evil.test', 'not a url']) assert.equal(endpointAllowed(list, no), false, no);
});

test('a path prefix allows itself and what is under it on a path boundary', () => {
  const list = ['https://gw.example/vendors/acme/'];
  assert.equal(endpointAllowed(list, 'https://gw.example/vendors/acme'), true);
  assert.equal(endpointAllowed(list, 'https://gw.example/vendors/acme/v1'), true);
  assert.equal(endpointAllowed(list, 'https://gw.example/vendors/acme-evil'), false);
  assert.equal(endpointAllowed(list, 'https://gw.example/vendors'), false);
});

test('property: an endpoint allowed by a list shares an entry\'s origin, and a list of one endpoint allows it', () => {
  fc.assert(fc.property(fc.webUrl({ validSchemes: ['https'], withQueryParameters: false, withFragments: false }), fc.webUrl({ validSchemes: ['https'] }), (entry, endpoint) => {
    assert.equal(endpointAllowed([entry], entry), true);
    if (endpointAllowed([entry], endpoint)) assert.equal(new URL(endpoint).origin, new URL(entry).origin);
  }));
});

test('entries that cannot be base URLs are named', () => {
  assert.deepEqual(allowedEndpointProblems(['https://ok.example', 'http://plain.example', 'https://u:p@x.example', 'https://x.example/?a', 'nope']), [
    'allowedEndpoints[1]: "http://plain.example" must use https',
    'allowedEndpoints[2]: "https://u:p@x.example" must be a base URL (no user info, query or fragment)',
    'allowedEndpoints[3]: "https://x.example/?a" must be a base URL (no user info, query or fragment)',
    'allowedEndpoints[4]: "nope" is not a URL',
  ]);
});

test('an endpoint no longer allowed under a live instance: the message says the instance exists and gives the two real ways out, not an edit the CRD refuses', () => {
  const dhp = (status?: DigitalHumanProvider['status']) => ({
    metadata: { name: 'studio', namespace: 'media', uid: 'u-1' },
    spec: { endpoint: 'https://old.vendor.example', region: 'eu', credentials: { secretRef: { name: 's' } } },
    ...(status ? { status } : {}),
  }) as DigitalHumanProvider;
  const allowed = ['https://api.vendor.example'];

  const fresh = endpointNotAllowedMessage(dhp(), allowed);
  assert.match(fresh, /nothing was read or sent\. Name an allowed endpoint/, 'no instance: naming another endpoint is the way');

  const live = endpointNotAllowedMessage(dhp({ providerID: 'inst-9', instanceEndpoint: 'https://old.vendor.example' }), allowed);
  assert.doesNotMatch(live, /nothing was read or sent|Name an allowed endpoint/);
  assert.match(live, /vendor instance inst-9 exists at https:\/\/old\.vendor\.example/);
  assert.match(live, /add https:\/\/old\.vendor\.example back to provider\.vendor\.allowedEndpoints/);
  assert.match(live, /kubectl annotate dhp studio -n media dhp\.example\.com\/abandon-instance=inst-9 .*kubectl delete dhp studio -n media/);

  const requested = endpointNotAllowedMessage(dhp({ instanceEndpoint: 'https://old.vendor.example', createRequestedAt: '2026-12-06T12:00:00.000Z' }), allowed);
  assert.match(requested, /a create was requested at https:\/\/old\.vendor\.example \(2026-12-06T12:00:00\.000Z\), so an instance may exist there/);
  assert.match(requested, /abandon-instance=u-1/, 'no ID recorded: the UID is what is given up');
});
