/**
 * `CaBundleInjector` on the real API server, against a CRD of its own (a group made for this run,
 * so nothing else in the shared cluster is touched): the CA is written once the CRD exists, a
 * CRD that trusts it costs no write at any recheck, and whatever "someone else" does to the
 * conversion block — a replace with the manifest as it was installed (no webhook), another CA,
 * another URL, a label added beside it, the CRD deleted and installed again — is repaired at the
 * next recheck, leaving that someone's other changes alone. The edits come in a seeded random
 * order (`CONVERGE_INJECTOR_SEED` replays one).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import {
  CaBundleInjector,
  CustomResourceDefinitionKind,
  defineCustomResource,
  directoryCaStore,
  ensureSelfManagedCa,
  installCustomResourceDefinitions,
  isNotFound,
} from '@converge/runtime';
import type { CustomResourceDefinition } from '@converge/runtime';
import { eventually, testClient, testLogger } from '../../support/operator-harness.ts';

interface Conversion {
  strategy: string;
  webhook?: { clientConfig?: { url?: string; caBundle?: string; service?: unknown }; conversionReviewVersions?: string[] };
}
const conversionOf = (crd: CustomResourceDefinition) => (crd.spec as { conversion?: Conversion }).conversion;

test('the injector writes the CA once the CRD exists, never writes a CRD that trusts it, and repairs what others change at the next recheck', { timeout: 180_000 }, async (t) => {
  const seed = Number(process.env.CONVERGE_INJECTOR_SEED ?? Math.floor(Math.random() * 2 ** 31));
  t.diagnostic(`seed ${seed} (CONVERGE_INJECTOR_SEED=${seed} replays the order of the edits)`);
  let x = seed || 1;
  const random = () => ((x = (x * 48271) % 2147483647) / 2147483647);

  const client = testClient(); // closed last, after the injector stopped and the CRD is gone (below)
  const group = `injector-${randomBytes(4).toString('hex')}.example.com`;
  const name = `boxes.${group}`;
  const manifest = defineCustomResource({
    group,
    kind: 'Box',
    plural: 'boxes',
    scope: 'Namespaced',
    versions: [{ name: 'v1', served: true, storage: true, schema: Type.Object({ spec: Type.Object({ size: Type.Integer() }) }) }],
  }).crd as unknown as CustomResourceDefinition;
  t.after(() => client.delete(CustomResourceDefinitionKind, { namespace: '', name }).catch(() => undefined));

  const caDir = mkdtempSync(join(tmpdir(), 'converge-injector-'));
  t.after(() => rmSync(caDir, { recursive: true, force: true }));
  const caPem = await ensureSelfManagedCa(directoryCaStore(caDir));
  const caBundle = Buffer.from(caPem).toString('base64');
  const url = 'https://127.0.0.1:9/convert';

  const injector = new CaBundleInjector({ client, crds: [name], caPem: () => caPem, url, recheckMs: 250, log: testLogger() });
  const stop = new AbortController();
  const running = injector.start(stop.signal);
  // Stopped however the test ends (after hooks run in the order they were added: the CRD is
  // deleted first, while the client is open): an injector left running after a failure retried
  // for good against the closed client and kept this file's process alive.
  t.after(async () => {
    stop.abort();
    await running;
    await client.close();
  });

  // No CRD yet: retried, not ready, the error says why.
  await eventually(() => injector.lastError(), { what: 'the missing CRD is reported' });
  assert.equal(injector.injected(), false);

  const trusted = async () => {
    const crd = await client.get(CustomResourceDefinitionKind, { namespace: '', name });
    const c = conversionOf(crd);
    return c?.strategy === 'Webhook' && c.webhook?.clientConfig?.caBundle === caBundle && c.webhook.clientConfig.url === url && !c.webhook.clientConfig.service ? crd : undefined;
  };
  const install = () => installCustomResourceDefinitions(client, [manifest], { fieldManager: 'someone-else' });
  await install();
  await eventually(trusted, { what: 'the CA written once the CRD exists' });
  // The write can be seen before the injector has taken in its answer: injected() follows it.
  await eventually(() => injector.injected(), { what: 'injected() once the CA is written', timeoutMs: 5_000 });

  /** No write at any of ≈ 6 rechecks. */
  const quiet = async (what: string) => {
    const before = (await client.get(CustomResourceDefinitionKind, { namespace: '', name })).metadata.resourceVersion;
    await new Promise((r) => setTimeout(r, 1_500));
    const after = (await client.get(CustomResourceDefinitionKind, { namespace: '', name })).metadata.resourceVersion;
    assert.equal(after, before, `a CRD that trusts the CA is not written (${what})`);
  };
  await quiet('after the first injection');

  const replaceConversion = async (conversion: Conversion, extra: { label?: string } = {}) => {
    for (;;) {
      const live = await client.get(CustomResourceDefinitionKind, { namespace: '', name });
      try {
        await client.replace(CustomResourceDefinitionKind, {
          ...live,
          metadata: { ...live.metadata, ...(extra.label ? { labels: { ...live.metadata.labels, [extra.label]: 'yes' } } : {}) },
          spec: { ...live.spec, conversion },
        } as CustomResourceDefinition);
        return;
      } catch (err) {
        if (!/Conflict/i.test(String((err as Error).message)) && (err as { reason?: string }).reason !== 'Conflict') throw err;
      }
    }
  };
  const otherCa = Buffer.from(await ensureSelfManagedCa(directoryCaStore(join(caDir, 'other')))).toString('base64');
  const edits: Record<string, () => Promise<void>> = {
    'replaced with the manifest as installed (no webhook)': () => replaceConversion({ strategy: 'None' }, { label: 'replaced' }),
    'another CA': () => replaceConversion({ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url, caBundle: otherCa } } }),
    'another URL': () => replaceConversion({ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: 'https://127.0.0.1:10/convert', caBundle } } }),
    'deleted and installed again': async () => {
      await client.delete(CustomResourceDefinitionKind, { namespace: '', name });
      await eventually(async () => client.get(CustomResourceDefinitionKind, { namespace: '', name }).then(() => false, (err) => isNotFound(err)), { what: 'the CRD gone' });
      await install();
    },
  };
  const order = Object.keys(edits).sort(() => random() - 0.5);
  for (const what of order) {
    await edits[what]!();
    const repaired = await eventually(trusted, { what: `repaired after: ${what}`, timeoutMs: 15_000 });
    if (what.startsWith('replaced')) assert.equal(repaired.metadata.labels?.replaced, 'yes', 'the other change made with the replace is kept');
    await quiet(`after: ${what}`);
  }
  t.diagnostic(`edits, in order: ${order.join('; ')}`);
});
