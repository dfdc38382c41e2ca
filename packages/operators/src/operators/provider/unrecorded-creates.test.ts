import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import type { Request } from '@converge/runtime';
import type { DigitalHumanProvider } from './api/schema-free.ts';
import type { LedgerEntry } from './late-create-ledger.ts';
import { UnrecordedCreates, HOLD_MS } from './unrecorded-creates.ts';

const KEY = 'ns/p';
const SENT = Date.parse('2026-12-03T10:00:00.000Z');
const SOON = SENT + 100;
const LATER = SENT + HOLD_MS;
const request = (): Request => ({ namespace: 'ns', name: 'p', key: KEY, reconcileId: 'r', log: pino({ level: 'silent' }) });
const provider = (uid: string, extra: { providerID?: string; deleting?: boolean } = {}): DigitalHumanProvider => ({
  apiVersion: 'dhp.example.com/v1',
  kind: 'DigitalHumanProvider',
  metadata: { name: 'p', namespace: 'ns', uid, ...(extra.deleting ? { deletionTimestamp: '2026-12-03T00:00:00Z' } : {}) },
  spec: { endpoint: 'https://vendor', region: 'eu-west-1', credentials: { secretRef: { name: 'creds' } } },
  ...(extra.providerID ? { status: { providerID: extra.providerID } } : {}),
});

function setup(fail = false) {
  const recorded: { entry: LedgerEntry; token: string }[] = [];
  const sweep = {
    windowMs: 60_000,
    async record(entry: LedgerEntry, token: string) {
      if (fail) throw new Error('ConfigMap write refused');
      recorded.push({ entry, token });
    },
  };
  const unrecorded = new UnrecordedCreates(sweep);
  unrecorded.sent(KEY, provider('u1'), 'https://vendor', 'tok', '2026-12-03T10:00:00.000Z');
  return { unrecorded, recorded };
}

test('a provider gone from the cache with a create not recorded: its key goes to the sweep, once', async () => {
  const { unrecorded, recorded } = setup();
  const signal = new AbortController().signal;
  await unrecorded.observe(request(), undefined, false, SOON, signal);
  await unrecorded.observe(request(), undefined, false, SOON, signal);
  assert.equal(recorded.length, 1);
  assert.deepEqual(recorded[0], {
    token: 'tok',
    entry: { uid: 'u1', namespace: 'ns', name: 'p', endpoint: 'https://vendor', secret: { name: 'creds', key: 'token' }, requestedAt: '2026-12-03T10:00:00.000Z', until: '2026-12-03T10:01:00.000Z' },
  });
});

test('replaced by another object of the same name: the old key goes to the sweep', async () => {
  const { unrecorded, recorded } = setup();
  await unrecorded.observe(request(), provider('u2'), true, SOON, new AbortController().signal);
  assert.deepEqual(recorded.map((r) => r.entry.uid), ['u1']);
});

test('no write while the provider lives, once its deletion honours the finalizer, or once the status has recorded the instance for a minute', async () => {
  const signal = new AbortController().signal;
  for (const [seen, at] of [[provider('u1', { deleting: true }), SOON], [provider('u1', { providerID: 'inst-1' }), LATER]] as const) {
    const { unrecorded, recorded } = setup();
    await unrecorded.observe(request(), provider('u1'), true, SOON, signal); // alive, nothing recorded yet: held
    await unrecorded.observe(request(), seen, true, at, signal); // dropped
    await unrecorded.observe(request(), undefined, false, at, signal); // gone afterwards: nothing to do
    assert.equal(recorded.length, 0);
  }
});

test('recorded in the status, then removed within the minute the racing DELETE may take: the key still goes to the sweep', async () => {
  const { unrecorded, recorded } = setup();
  const signal = new AbortController().signal;
  await unrecorded.observe(request(), provider('u1', { providerID: 'inst-1' }), true, LATER - 1, signal);
  await unrecorded.observe(request(), undefined, false, LATER - 1, signal);
  assert.deepEqual(recorded.map((r) => r.entry.uid), ['u1']);
});

test('deleted without our finalizer in view is not the deletion path: the key still goes to the sweep', async () => {
  const { unrecorded, recorded } = setup();
  const signal = new AbortController().signal;
  await unrecorded.observe(request(), provider('u1', { deleting: true }), false, SOON, signal);
  await unrecorded.observe(request(), undefined, false, SOON, signal);
  assert.equal(recorded.length, 1);
});

test('when the key cannot be stored, the reconcile fails and the entry is kept for the retry', async () => {
  const { unrecorded } = setup(true);
  await assert.rejects(unrecorded.observe(request(), undefined, false, SOON, new AbortController().signal), /cannot be stored for the late-create sweep yet: ConfigMap write refused/);
  await assert.rejects(unrecorded.observe(request(), undefined, false, SOON, new AbortController().signal), /ConfigMap write refused/);
});
