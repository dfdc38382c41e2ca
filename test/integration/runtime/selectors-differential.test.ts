/**
 * The cache's own selector judgement against the API server's. An informer with a label or field
 * selector decides by itself whether an object it just wrote belongs in its store
 * (`cache/selectors.ts`); where it says yes and the API server says no, the store holds an object
 * its watch will never deliver or remove (a ghost). So random selectors over the full label syntax
 * are evaluated both ways on the same ConfigMaps, and every answer the cache gives must be the API
 * server's (the cache may say "cannot tell" only for fields it does not judge).
 *
 * Label keys include names of `Object.prototype`'s members (`constructor`, `toString`): valid
 * label keys, and a lookup that walks the prototype chain finds them on every object.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ApiError, ConfigMapKind, type KubeObject } from '@converge/runtime';
import { compileSelection } from '../../../packages/runtime/src/cache/selectors.ts';
import { testClient, testNamespace } from '../../support/operator-harness.ts';

const KEYS = ['app', 'tier', 'example.io/role', 'constructor', 'toString', 'n'] as const;
const VALUES = ['a', 'b', '', '1', '7'] as const;

const labelSet = fc.dictionary(fc.constantFrom(...KEYS), fc.constantFrom(...VALUES), { maxKeys: 4 });

const key = fc.constantFrom(...KEYS);
const value = fc.constantFrom(...VALUES);
const values = fc.uniqueArray(fc.constantFrom('a', 'b', '1', '7'), { minLength: 1, maxLength: 3 }).map((vs) => vs.join(', '));
/** Optional blanks around operators, parentheses and commas: the API server's lexer skips them. */
const _ = fc.constantFrom('', '', ' ', '  ');
const labelTerm = fc.oneof(
  fc.tuple(key, _, fc.constantFrom('=', '==', '!='), _, value).map(([k, a, op, b, v]) => `${k}${a}${op}${b}${v}`),
  fc.tuple(key, fc.constantFrom('in', 'notin'), _, values, _).map(([k, op, a, vs, b]) => `${k} ${op}${a}(${a}${vs}${b})`),
  key,
  fc.tuple(_, key).map(([a, k]) => `!${a}${k}`),
  fc.tuple(key, _, fc.constantFrom('>', '<'), _, fc.constantFrom('0', '5', '+5', '-1', '9223372036854775807')).map(([k, a, op, b, n]) => `${k}${a}${op}${b}${n}`),
);
const labelSelector = fc.tuple(fc.array(labelTerm, { minLength: 1, maxLength: 3 }), _).map(([ts, gap]) => ts.join(`,${gap}`));
const fieldSelector = fc.option(
  fc.tuple(fc.constantFrom('metadata.name', 'metadata.namespace'), fc.constantFrom('=', '==', '!='), fc.constantFrom('cm-0', 'cm-1', 'elsewhere')).map(([f, op, v]) => `${f}${op}${v}`),
  { nil: undefined },
);

test('the cache judges label and field selectors as the API server does (random selectors, prototype-named keys)', { timeout: 180_000 }, async (t) => {
  const client = testClient();
  const ns = await testNamespace(t, client, 'selectors');
  const objects: KubeObject[] = [];
  const labelSets: Record<string, string>[] = [{}, { constructor: 'a' }, { toString: '' }, ...fc.sample(labelSet, { numRuns: 21, seed: 17 })];
  for (const [i, labels] of labelSets.entries()) {
    objects.push(await client.create(ConfigMapKind, { metadata: { name: `cm-${i}`, namespace: ns, labels } }));
  }
  const seen = { compared: 0, refused: 0 };
  await fc.assert(
    fc.asyncProperty(labelSelector, fieldSelector, async (labels, fields) => {
      let served: Set<string>;
      try {
        const list = await client.list(ConfigMapKind, { namespace: ns, labelSelector: labels, ...(fields ? { fieldSelector: fields } : {}) });
        served = new Set(list.items.map((o) => o.metadata.name!));
      } catch (err) {
        if (err instanceof ApiError && err.code === 400) {
          seen.refused++; // no watch of it runs, so nothing is judged by the cache either
          return;
        }
        throw err;
      }
      seen.compared++;
      const selection = compileSelection(labels, fields);
      for (const o of objects) {
        const ours = selection.matches(o);
        assert.equal(ours, served.has(o.metadata.name!), `"${labels}"${fields ? ` / "${fields}"` : ''} on ${o.metadata.name} ${JSON.stringify(o.metadata.labels ?? {})}: the API server ${served.has(o.metadata.name!) ? 'selects' : 'does not select'} it, the cache says ${ours}`);
      }
    }),
    { numRuns: Number(process.env.CONVERGE_SELECTOR_RUNS ?? 200), seed: Number(process.env.CONVERGE_SELECTOR_SEED ?? Date.now() % 1_000_000) },
  );
  t.diagnostic(`selectors compared ${seen.compared}, refused by the API server ${seen.refused}`);
  assert.ok(seen.compared > 100, `only ${seen.compared} selectors were accepted by the API server`);
});
