/**
 * The deletion's wait for a create that may still be in flight, measured against clocks that
 * disagree: `status.createRequestedAt` is a wall-clock time, possibly written by another process.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@converge/runtime';
import type { KubeClient, Request } from '@converge/runtime';
import { ProviderDeletion } from './deletion.ts';
import type { DeletionDeps } from './deletion.ts';
import { ABANDON_ANNOTATION, PROVIDER_FINALIZER } from './api/schema-free.ts';
import type { DigitalHumanProvider } from './api/schema-free.ts';
import type { VendorApis } from './vendor-api.ts';
import type { CredentialsProblem } from './credentials.ts';
import type { ProviderFinding } from './status-writer.ts';
import { VendorError } from './vendor/index.ts';

const NOW = Date.parse('2026-12-06T12:00:00Z');
const log = { info() {}, debug() {}, warn() {} };

function setup(createRequestedAt: string | undefined, options: { token?: string; problem?: CredentialsProblem; vendorFails?: VendorError; allowedEndpoints?: string[]; lateCreates?: DeletionDeps['lateCreates']; get?: () => Promise<unknown> } = {}) {
  const clock = new FakeClock(NOW);
  const fails = async () => { if (options.vendorFails) throw options.vendorFails; return undefined; };
  const vendor = { findByIdempotencyKey: fails, getInstance: fails, deleteInstance: async () => false };
  const findings: ProviderFinding[] = [];
  let tokenReads = 0;
  const vendorCalls: string[] = [];
  const blocked: string[] = [];
  const released: string[] = [];
  const client = {
    get: options.get ?? (async () => { throw new Error('no GET expected'); }),
    patch: async (_kind: unknown, key: { name: string }) => { released.push(key.name); return { metadata: { name: key.name, finalizers: [] } }; },
  } as unknown as KubeClient;
  const deletion = new ProviderDeletion(
    {
      client, vendors: { forEndpoint: (endpoint: string) => (vendorCalls.push(endpoint), vendor) } as unknown as VendorApis, events: { normal() {}, warning() {} } as never, clock, createSettleMs: 20_000,
      ...(options.allowedEndpoints ? { allowedEndpoints: options.allowedEndpoints } : {}),
      ...(options.lateCreates ? { lateCreates: options.lateCreates } : {}),
    },
    {
      status: async (_dhp, finding) => void (findings.push(finding), blocked.push(finding.message)),
      token: async () => (tokenReads++, 'token' in options ? options.token : 'token'),
      credentialsProblem: () => options.problem ?? { reason: 'CredentialsMissing', message: 'Secret s with key token not found in namespace ns' },
    },
  );
  const dhp = {
    apiVersion: 'dhp.example.com/v1',
    kind: 'DigitalHumanProvider',
    metadata: { name: 'p', namespace: 'ns', uid: 'u1', resourceVersion: '7', finalizers: [PROVIDER_FINALIZER], deletionTimestamp: '2026-12-06T12:00:00Z' },
    spec: { endpoint: 'https://vendor.example', region: 'eu', credentials: { secretRef: { name: 's' } } },
    status: createRequestedAt === undefined ? {} : { instanceEndpoint: 'https://vendor.example', createRequestedAt },
  } as unknown as DigitalHumanProvider;
  const request = { key: 'ns/p', namespace: 'ns', name: 'p', log } as unknown as Request;
  const run = () => deletion.delete(dhp, request, new AbortController().signal);
  return { clock, blocked, dhp, findings, released, run, tokenReads: () => tokenReads, vendorCalls };
}

test('a create requested "an hour from now" (another clock, or ours stepped back) holds the finalizer for the settle time, not for the skew', async () => {
  const s = setup(new Date(NOW + 3_600_000).toISOString());
  const first = await s.run();
  assert.ok((first.requeueAfterMs ?? Infinity) <= 20_000, `looked at again in ${first.requeueAfterMs} ms`);
  assert.equal(s.released.length, 0, 'not released at once: the create may be in flight');
  await s.clock.advanceAsync(20_000);
  await s.run();
  assert.deepEqual(s.released, ['p'], 'released once the settle time passed on this process\'s own clock');
});

test('a create requested a moment ago waits what is left of the settle time', async () => {
  const s = setup(new Date(NOW - 15_000).toISOString());
  const first = await s.run();
  assert.equal(first.requeueAfterMs, 5_000);
  assert.match(s.blocked[0] ?? '', /may still be in progress/);
  await s.clock.advanceAsync(5_000);
  await s.run();
  assert.deepEqual(s.released, ['p']);
});

test('a deletion the vendor refuses the token for (401) needs a person: Stalled (permanent), not retried as if the vendor were away', async () => {
  const s = setup(new Date(NOW - 60_000).toISOString(), { vendorFails: new VendorError({ kind: 'Unauthorized', operation: 'findByIdempotencyKey', message: 'vendor findByIdempotencyKey: 401 invalid token' }) });
  await assert.rejects(s.run(), (err: Error) => err.name === 'PermanentError' && /token/.test(err.message));
  const finding = s.findings.at(-1)!;
  assert.equal(finding.reason, 'DeletionBlocked');
  assert.equal(finding.permanent, true);
  assert.match(finding.message, /the vendor refuses the token of Secret s/);
  assert.doesNotMatch(finding.message, /retrying/);
  assert.equal(s.released.length, 0);
});

test('a deletion whose Secret is not labelled for vendor use: Stalled with the label command, nothing sent', async () => {
  const problem: CredentialsProblem = { reason: 'CredentialsNotAllowed', message: 'Secret s in namespace ns is not labelled for vendor use (kubectl -n ns label secret s dhp.example.com/vendor-credentials=true)' };
  const s = setup(new Date(NOW - 60_000).toISOString(), { token: undefined, problem });
  await assert.rejects(s.run(), (err: Error) => err.name === 'PermanentError');
  const finding = s.findings.at(-1)!;
  assert.equal(finding.permanent, true);
  assert.match(finding.message, /kubectl -n ns label secret s/);
  assert.match(finding.message, /cannot be deleted without it/);
});

test('a deletion whose Secret is missing waits for it (transient), as before', async () => {
  const s = setup(new Date(NOW - 60_000).toISOString(), { token: undefined });
  await assert.rejects(s.run(), (err: Error) => err.name === 'TemporaryError');
  assert.notEqual(s.findings.at(-1)!.permanent, true);
});

test('a deletion at an endpoint provider.vendor.allowedEndpoints does not allow reads no token and calls no vendor: nothing sent, released; something may exist, Stalled', async () => {
  const never = setup(undefined, { allowedEndpoints: ['https://other.example'] });
  await never.run();
  assert.deepEqual(never.released, ['p'], 'no create was ever sent: released without a vendor call');
  assert.equal(never.tokenReads(), 0);
  assert.deepEqual(never.vendorCalls, []);

  const sent = setup(new Date(NOW - 60_000).toISOString(), { allowedEndpoints: ['https://other.example'] });
  await assert.rejects(sent.run(), (err: Error) => err.name === 'PermanentError');
  assert.equal(sent.findings.at(-1)!.permanent, true);
  assert.match(sent.findings.at(-1)!.message, /does not allow/);
  assert.equal(sent.tokenReads(), 0, 'the Secret is not read');
  assert.deepEqual(sent.vendorCalls, []);
  assert.equal(sent.released.length, 0);
});

test('a deletion whose endpoint the client refuses before any request is Stalled, not retried for ever', async () => {
  const s = setup(new Date(NOW - 60_000).toISOString(), { vendorFails: new VendorError({ kind: 'Invalid', operation: 'createClient', message: 'vendor endpoint must not carry a query or a fragment' }) });
  await assert.rejects(s.run(), (err: Error) => err.name === 'PermanentError');
  assert.equal(s.findings.at(-1)!.permanent, true);
  assert.doesNotMatch(s.findings.at(-1)!.message, /retrying/);
});

test('a delete the vendor refuses (409 "instance busy", a 422) is Stalled with its words and asked again after the rejected-retry interval, not retried as if the vendor were away', async () => {
  const s = setup(new Date(NOW - 60_000).toISOString(), { vendorFails: new VendorError({ kind: 'Invalid', operation: 'findByIdempotencyKey', status: 409, message: 'vendor findByIdempotencyKey: 409 instance busy' }) });
  const result = await s.run();
  const finding = s.findings.at(-1)!;
  assert.equal(finding.reason, 'DeletionBlocked');
  assert.equal(finding.permanent, true, 'Stalled: kstatus says Failed, a GitOps prune does not wait on it as InProgress');
  assert.match(finding.message, /the vendor refuses to delete/);
  assert.match(finding.message, /409 instance busy/);
  assert.doesNotMatch(finding.message, /cannot confirm/, 'a refusal is not a missing answer');
  assert.match(finding.message, /kubectl annotate/, 'the way out is named');
  assert.equal(result.requeueAfterMs, 600_000, 'asked again after provider.rejectedRetrySeconds (the vendor may stop refusing)');
  assert.equal(s.released.length, 0);
});

test('an abandonment the late-create ledger cannot record says why the finalizer stays, instead of repeating the command the person just ran', async () => {
  const ledgerDown = async () => { throw new Error('configmaps "converge-late-creates-7" is forbidden: exceeded quota'); };
  let live: unknown;
  const s = setup(new Date(NOW - 60_000).toISOString(), { lateCreates: { record: ledgerDown, forget: ledgerDown, windowMs: 900_000 }, get: async () => structuredClone(live) });
  s.dhp.metadata.annotations = { [ABANDON_ANNOTATION]: 'u1' };
  live = s.dhp;
  await assert.rejects(s.run(), (err: Error) => err.name === 'TemporaryError');
  const finding = s.findings.at(-1);
  assert.ok(finding, 'a status says what holds the abandonment');
  assert.equal(finding.reason, 'DeletionBlocked');
  assert.match(finding.message, /abandon/);
  assert.match(finding.message, /exceeded quota/);
  assert.doesNotMatch(finding.message, /to give the instance up without cleanup/, 'not the command already run');
  assert.equal(s.released.length, 0, 'a key left in the ledger could make the sweep delete the instance the person gave up');
});
