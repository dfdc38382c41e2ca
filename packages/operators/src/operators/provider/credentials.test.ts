/**
 * What the credentials reader holds: tokens of Secrets some cached provider names, one GET per
 * Secret version, and the last token of a Secret deleted before the provider that named it (its
 * cleanup still needs it), until that provider is gone too.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, type KubeClient, type PartialObjectMetadata, type Secret, type Store } from '@converge/runtime';
import { CredentialsReader } from './credentials.ts';
import { VENDOR_CREDENTIALS_LABEL } from './api/constants.ts';

function world() {
  const secrets = new Map<string, Secret>();
  const referenced = new Set<string>();
  let gets = 0;
  const client = {
    get: async (_kind: unknown, key: { namespace: string; name: string }) => {
      gets++;
      const s = secrets.get(`${key.namespace}/${key.name}`);
      if (!s) throw new ApiError({ reason: 'NotFound', code: 404, message: 'not found' });
      return s;
    },
  } as unknown as KubeClient;
  const state: { cacheOverride: PartialObjectMetadata | undefined } = { cacheOverride: undefined };
  const store = {
    get: (key: { namespace: string; name: string }) => {
      if (state.cacheOverride) return state.cacheOverride;
      const s = secrets.get(`${key.namespace}/${key.name}`);
      return s ? ({ metadata: s.metadata } as PartialObjectMetadata) : undefined;
    },
  } as unknown as Store<PartialObjectMetadata>;
  const reader = new CredentialsReader({ client, secrets: store, referenced: (ns, name) => referenced.has(`${ns}/${name}`) });
  const put = (name: string, token: string, rv: string, { labelled = true } = {}) =>
    secrets.set(`ns/${name}`, {
      metadata: { namespace: 'ns', name, uid: `uid-${name}`, resourceVersion: rv, ...(labelled ? { labels: { [VENDOR_CREDENTIALS_LABEL]: 'true' } } : {}) },
      data: { token: Buffer.from(token).toString('base64') },
    });
  return {
    reader, secrets, referenced, put, gets: () => gets,
    /** What the metadata cache shows instead of the Secret as it is (a cache that lags). */
    set cacheOverride(meta: PartialObjectMetadata | undefined) { state.cacheOverride = meta; },
  };
}

test('a token is read once per Secret version and served from memory while the version holds', async () => {
  const w = world();
  w.referenced.add('ns/a');
  w.put('a', 'one', '1');
  assert.equal(await w.reader.token('ns', 'a', 'token'), 'one');
  assert.equal(await w.reader.token('ns', 'a', 'token'), 'one');
  assert.equal(w.gets(), 1);
  w.put('a', 'two', '2');
  assert.equal(await w.reader.token('ns', 'a', 'token'), 'two');
  assert.equal(w.gets(), 2);
});

test('the last token of a deleted Secret stays for the provider that still names it, and goes with it', async () => {
  const w = world();
  w.referenced.add('ns/a');
  w.put('a', 'one', '1');
  await w.reader.token('ns', 'a', 'token');
  w.secrets.delete('ns/a');
  assert.equal(await w.reader.token('ns', 'a', 'token'), undefined, 'the Secret is gone');
  assert.equal(w.reader.lastKnown('ns', 'a', 'token'), 'one', 'its last token, for the cleanup of the provider that named it');
  w.reader.release('ns', 'a');
  assert.equal(w.reader.lastKnown('ns', 'a', 'token'), 'one', 'still named by a cached provider');
  w.referenced.delete('ns/a');
  w.reader.release('ns', 'a');
  assert.equal(w.reader.lastKnown('ns', 'a', 'token'), undefined, 'no provider names it any more');
  assert.equal(w.reader.size, 0);
});

test('no token is held for a Secret no cached provider names (a late-create sweep reading for a provider already gone)', async () => {
  const w = world();
  w.put('a', 'one', '1');
  assert.equal(await w.reader.token('ns', 'a', 'token'), 'one');
  assert.equal(w.reader.size, 0);
});

test('a Secret released while another provider still names it stays; released by the last one, it goes', async () => {
  const w = world();
  w.referenced.add('ns/a');
  w.put('a', 'one', '1');
  await w.reader.token('ns', 'a', 'token');
  w.reader.release('ns', 'a');
  assert.equal(await w.reader.token('ns', 'a', 'token'), 'one');
  assert.equal(w.gets(), 1, 'still held: served from memory');
  w.referenced.delete('ns/a');
  w.reader.release('ns', 'a');
  assert.equal(w.reader.size, 0);
});

test('a Secret without the vendor-credentials label is never read: no token, no GET, and the problem names the label to add', async () => {
  const w = world();
  w.referenced.add('ns/a');
  w.put('a', 'one', '1', { labelled: false });
  assert.equal(await w.reader.token('ns', 'a', 'token'), undefined);
  assert.equal(w.gets(), 0, 'the Secret\'s data was not fetched');
  const problem = w.reader.problem('ns', 'a', 'token');
  assert.equal(problem.reason, 'CredentialsNotAllowed');
  assert.match(problem.message, /kubectl -n ns label secret a dhp\.example\.com\/vendor-credentials=true/);
});

test('a label taken away after a token was read: no token, and no last one either (only a deleted Secret leaves its last token)', async () => {
  const w = world();
  w.referenced.add('ns/a');
  w.put('a', 'one', '1');
  assert.equal(await w.reader.token('ns', 'a', 'token'), 'one');
  w.put('a', 'one', '2', { labelled: false });
  assert.equal(await w.reader.token('ns', 'a', 'token'), undefined);
  assert.equal(w.reader.lastKnown('ns', 'a', 'token'), undefined);
  assert.equal(w.reader.size, 0);
});

test('a token a request header cannot carry (a line break, a space, non-ASCII) is refused before any request, without quoting it', async () => {
  for (const [token, what] of [['abc\ndef', 'a line break'], ['abc def', 'a space'], ['abc\u201cdef', 'a character outside printable ASCII'], ['ab\u200bc', 'a character outside printable ASCII']] as const) {
    const w = world();
    w.referenced.add('ns/a');
    w.put('a', token, '1');
    assert.equal(await w.reader.token('ns', 'a', 'token'), undefined, JSON.stringify(token));
    const problem = w.reader.problem('ns', 'a', 'token');
    assert.equal(problem.reason, 'CredentialsInvalid');
    assert.ok(problem.message.includes(what), problem.message);
    assert.ok(!problem.message.includes('abc') && !problem.message.includes('def'), 'the token is not quoted');
  }
});

test('the problem of a missing Secret or key says so', async () => {
  const w = world();
  w.referenced.add('ns/a');
  assert.equal(w.reader.problem('ns', 'a', 'token').reason, 'CredentialsMissing');
  w.put('a', 'one', '1');
  assert.equal(await w.reader.token('ns', 'a', 'other'), undefined);
  const problem = w.reader.problem('ns', 'a', 'other');
  assert.equal(problem.reason, 'CredentialsMissing');
  assert.match(problem.message, /key other/);
});

test('the Secret as read must be the one the cache judged, still labelled: a label taken away (or a re-created Secret) the cache has not seen yet gives no token', async () => {
  const w = world();
  w.referenced.add('ns/a');
  w.put('a', 'one', '1');
  const cached = { metadata: { ...w.secrets.get('ns/a')!.metadata } } as PartialObjectMetadata;
  w.cacheOverride = cached; // the metadata cache still shows the labelled version
  w.put('a', 'one', '2', { labelled: false });
  assert.equal(await w.reader.token('ns', 'a', 'token'), undefined, 'unlabelled as read');
  w.put('a', 'one', '3');
  w.secrets.get('ns/a')!.metadata.uid = 'uid-a-recreated';
  assert.equal(await w.reader.token('ns', 'a', 'token'), undefined, 'another Secret of that name');
  assert.equal(w.reader.size, 0);
});
