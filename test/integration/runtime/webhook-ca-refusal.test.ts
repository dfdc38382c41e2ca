/**
 * A webhook replica whose CA is no longer the one the API server trusts follows its store at the
 * first refused request, not at its next scheduled look: kube-apiserver (a Go TLS client) answers
 * a certificate it does not trust with a `bad certificate` alert, the webhook server asks its
 * certificate source to look again (`CertificateSource.recheck`), and the self-managed source
 * reads its store at once. Here the store is looked at every 10 min, so only the refusal can make
 * the replica follow within the test: a CRD of its own (a group made for this run) converts
 * through the replica; its CA is replaced in the store and in the CRD's `caBundle` (what the
 * injector does); reads of the converted version work again within seconds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { Registry } from 'prom-client';
import {
  ConversionRegistry,
  CustomResourceDefinitionKind,
  WebhookServer,
  defineCustomResource,
  directoryCaStore,
  ensureSelfManagedCa,
  installCustomResourceDefinitions,
  selfManagedCertificates,
} from '@converge/runtime';
import type { CustomResourceDefinition } from '@converge/runtime';
import { eventually, testClient, testLogger, testNamespace } from '../../support/operator-harness.ts';

test('a replica refused for its CA by the API server follows the CA in its store at once', { timeout: 120_000 }, async (t) => {
  const client = testClient();
  t.after(() => client.close());
  const ns = await testNamespace(t, client, 'webhook-refusal');
  const group = `refusal-${randomBytes(4).toString('hex')}.example.com`;
  const name = `boxes.${group}`;
  t.after(() => client.delete(CustomResourceDefinitionKind, { namespace: '', name }).catch(() => undefined));

  // The replica: its CA in a folder, looked at every 10 min.
  const dir = mkdtempSync(join(tmpdir(), 'converge-refusal-'));
  const otherDir = mkdtempSync(join(tmpdir(), 'converge-refusal-other-'));
  t.after(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(otherDir, { recursive: true, force: true });
  });
  const conversions = new ConversionRegistry().register({ group, kind: 'Box', hub: 'v1', spokes: [{ version: 'v2', toHub: (o) => o, fromHub: (o) => o }] });
  const stop = new AbortController();
  const registry = new Registry();
  const server = new WebhookServer({ bindAddress: '127.0.0.1:0', certificates: selfManagedCertificates({ store: directoryCaStore(dir), caCheckMs: 600_000 }), log: testLogger(), registry }).serveConversion(conversions);
  const refusals = async () => (await registry.getSingleMetric('converge_webhook_certificate_refusals_total')!.get()).values[0]?.value ?? NaN;
  assert.equal(await refusals(), 0, 'the refusal counter is there from the start, at zero');
  const running = server.start(stop.signal);
  t.after(async () => {
    stop.abort();
    await running;
  });
  const { port } = (await server.listening())!;

  // A CRD that converts v1 <-> v2 through the replica, trusting its CA.
  const spec = Type.Object({ spec: Type.Object({ size: Type.Integer() }) });
  const crd = defineCustomResource({
    group,
    kind: 'Box',
    plural: 'boxes',
    scope: 'Namespaced',
    versions: [{ name: 'v1', served: true, storage: true, schema: spec }, { name: 'v2', served: true, storage: false, schema: spec }],
    conversionWebhook: { service: { namespace: 'unused', name: 'unused' } },
  }).crd as unknown as CustomResourceDefinition;
  const clientConfig = (caPem: string) => ({ url: `https://127.0.0.1:${port}/convert`, caBundle: Buffer.from(caPem).toString('base64') });
  const conversion = (caPem: string) => ({ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: clientConfig(caPem) } });
  (crd.spec as { conversion?: unknown }).conversion = conversion(server.caPem()!);
  await installCustomResourceDefinitions(client, [crd], { timeoutMs: 30_000 });
  const path = `/apis/${group}/v1/namespaces/${ns}/boxes`;
  await eventually(() => client.request('POST', path, { body: { apiVersion: `${group}/v1`, kind: 'Box', metadata: { name: 'b' }, spec: { size: 3 } } }).then(() => true, () => false), { timeoutMs: 30_000, what: 'a Box created' });
  const readV2 = () => client.request<{ apiVersion: string }>('GET', `/apis/${group}/v2/namespaces/${ns}/boxes/b`);
  await eventually(async () => (await readV2().catch(() => undefined))?.apiVersion === `${group}/v2`, { timeoutMs: 30_000, what: 'v2 read through the webhook' });

  // Another CA in the store (the Secret replaced) and in the CRD (the injector's write).
  const otherCa = await ensureSelfManagedCa(directoryCaStore(otherDir));
  rmSync(join(dir, 'ca.crt'));
  rmSync(join(dir, 'ca.key'));
  writeFileSync(join(dir, 'ca.key'), readFileSync(join(otherDir, 'ca.key')));
  writeFileSync(join(dir, 'ca.crt'), otherCa);
  await client.patch(CustomResourceDefinitionKind, { namespace: '', name }, { type: 'merge', body: { spec: { conversion: conversion(otherCa) } } });

  // The API server takes up the CRD's new caBundle a moment later (reads still succeed through the
  // old one meanwhile); from then on it refuses the replica's certificate until the replica
  // follows. The first such read is refused (only a refusal makes the replica look again).
  await eventually(async () => readV2().then(() => false, () => true), { timeoutMs: 30_000, intervalMs: 50, what: 'the API server refusing the replica (it trusts the new CA now)' });
  const refused = performance.now();
  await eventually(async () => (await readV2().catch(() => undefined))?.apiVersion === `${group}/v2`, { timeoutMs: 30_000, intervalMs: 100, what: 'v2 read through the webhook again, the replica following the new CA' });
  t.diagnostic(`followed ${Math.round(performance.now() - refused)} ms after the first refusal`);
  assert.equal(server.caPem(), otherCa);
  assert.ok((await refusals()) >= 1, 'the refusals are counted (an alert on them says the API server trusts another CA)');
});
