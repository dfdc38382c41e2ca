/**
 * The self-managed webhook CA kept in a Secret (`secretCaStore`, what `deploy/` uses), on the real
 * API server, with two "replicas" (two certificate sources on one Secret): they start on one CA;
 * the Secret deleted is put back with that CA (no replica changes certificate); the Secret replaced
 * by hand with another CA is followed by both, each issuing a serving certificate from it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecretKind, directoryCaStore, ensureSelfManagedCa, secretCaStore, selfManagedCertificates } from '@converge/runtime';
import type { ServingCertificate } from '@converge/runtime';
import { eventually, testClient, testNamespace } from '../../support/operator-harness.ts';

test('replicas sharing a CA Secret agree on its CA: a deleted Secret is put back, a replaced one is followed', { timeout: 120_000 }, async (t) => {
  const client = testClient();
  t.after(() => client.close());
  const ns = await testNamespace(t, client, 'webhook-ca');
  const name = 'converge-webhook-ca';
  const stop = new AbortController();
  t.after(() => stop.abort());
  const replicas = ['a', 'b'].map(() => {
    const certs: ServingCertificate[] = [];
    const done = selfManagedCertificates({ store: secretCaStore(client, ns, name), caCheckMs: 300 }).start(stop.signal, (c) => void certs.push(c));
    return { certs, done };
  });
  const caOfSecret = async () => {
    const s = await client.get(SecretKind, { namespace: ns, name }).catch(() => undefined);
    const crt = s?.data?.['ca.crt'];
    return crt ? Buffer.from(crt, 'base64').toString('utf8') : undefined;
  };
  await eventually(() => replicas.every((r) => r.certs.length === 1), { what: 'both replicas serving' });
  const ca = replicas[0]!.certs[0]!.caPem!;
  assert.equal(replicas[1]!.certs[0]!.caPem, ca, 'one CA for both');
  assert.equal(await caOfSecret(), ca);

  await client.delete(SecretKind, { namespace: ns, name });
  await eventually(async () => (await caOfSecret()) === ca, { what: 'the Secret put back with the CA in use' });
  await new Promise((r) => setTimeout(r, 1_000));
  assert.deepEqual(replicas.map((r) => r.certs.length), [1, 1], 'no replica changed certificate');

  const dir = mkdtempSync(join(tmpdir(), 'converge-other-ca-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const other = await ensureSelfManagedCa(directoryCaStore(dir));
  const live = await client.get(SecretKind, { namespace: ns, name });
  await client.replace(SecretKind, { ...live, data: { 'ca.crt': Buffer.from(other).toString('base64'), 'ca.key': readFileSync(join(dir, 'ca.key')).toString('base64') } });
  await eventually(() => replicas.every((r) => r.certs.at(-1)?.caPem === other), { what: 'both replicas following the CA put in the Secret' });
  for (const r of replicas) assert.ok(new X509Certificate(r.certs.at(-1)!.certPem).verify(new X509Certificate(other).publicKey), 'issued by that CA');

  stop.abort();
  await Promise.all(replicas.map((r) => r.done));
});
