/**
 * Property test of `patchStatus` and `mergePatchFrom` against RFC 7386 itself: random statuses
 * as the API server holds them (JSON) and random desired statuses as an operator builds them
 * (`undefined` and `null` values, `-0`, keys named like `Object.prototype`'s properties and
 * `__proto__`), the patch sent through `JSON.stringify` as the client sends it, and applied to
 * the current status by a reference of what kube-apiserver does with a merge patch (RFC 7386,
 * and `null` fields pruned from what it puts in whole, as evanphx/json-patch v4 does).
 *
 * Checked: after the patch, the status is the desired one as JSON carries it (an `undefined` or
 * `null` field of an object is no field: a merge patch cannot store a `null`); no write when
 * that is already the current status (principle 4: a converged object costs no write); the
 * patch names the UID and resourceVersion it was computed from.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { KubeClient } from '../client/index.ts';
import type { KubeObject, ResourceKind } from '../objects/index.ts';
import { mergePatchFrom, patchStatus } from './index.ts';

const RUNS = Number.parseInt(process.env.PATCH_STATUS_RUNS ?? '500', 10);

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const KEYS = ['phase', 'message', 'a', 'b', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__'];

/** An object with own properties only, `__proto__` included, as `JSON.parse` makes them. */
function ownObject(entries: [string, unknown][]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  return o;
}

/** What the API server holds: JSON, objects without null fields (a merge patch stores none). */
const stored: fc.Arbitrary<Json> = fc.letrec<{ value: Json; object: Record<string, Json> }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.constantFrom<Json>(0, 1, 'x', 'y', true, false), tie('object'), fc.array(tie('value'), { maxLength: 2 }) as fc.Arbitrary<Json>),
  object: fc.uniqueArray(fc.tuple(fc.constantFrom(...KEYS), tie('value')), { maxLength: 4, selector: ([k]) => k }).map((e) => ownObject(e) as Record<string, Json>),
})).object;

/** What an operator may build: anything `JSON.stringify` accepts, with `undefined`, `null` and `-0`. */
const desired: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown; object: Record<string, unknown> }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<unknown>(0, -0, 1, 'x', 'y', true, false, null, undefined),
    tie('object'),
    fc.array(tie('value'), { maxLength: 2 }),
  ),
  object: fc.uniqueArray(fc.tuple(fc.constantFrom(...KEYS), tie('value')), { maxLength: 4, selector: ([k]) => k }).map(ownObject),
})).object;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A merge patch applied as kube-apiserver applies it (gopkg.in/evanphx/json-patch.v4's
 * `MergePatch`): RFC 7386, with `null` fields pruned from a value that is put in whole.
 */
function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(target)) return pruneNulls(patch);
  if (!isObject(patch)) return patch;
  const out = ownObject(Object.entries(target));
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else {
      const cur = Object.hasOwn(out, k) ? out[k] : undefined;
      const next = cur === undefined || cur === null ? pruneNulls(v) : applyMergePatch(cur, v);
      Object.defineProperty(out, k, { value: next, enumerable: true, writable: true, configurable: true });
    }
  }
  return out;
}

/** Removes `null` fields of objects, at any depth (array elements that are `null` stay). */
function pruneNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(pruneNulls);
  if (!isObject(v)) return v;
  return ownObject(Object.entries(v).filter(([, e]) => e !== null).map(([k, e]) => [k, pruneNulls(e)]));
}

/** The desired status as the API server ends up holding it. */
function asStored(v: unknown): unknown {
  return pruneNulls(JSON.parse(JSON.stringify(v)));
}

const Kind = { group: 'example.io', version: 'v1', plural: 'things', kind: 'Thing', namespaced: true } as unknown as ResourceKind<KubeObject & { status?: object }>;

function recordingClient(): { client: KubeClient; patches: unknown[] } {
  const patches: unknown[] = [];
  const client = {
    patch: async (_kind: unknown, _key: unknown, patch: { type: string; body: unknown }) => {
      assert.equal(patch.type, 'merge');
      patches.push(JSON.parse(JSON.stringify(patch.body)));
      return {};
    },
  } as unknown as KubeClient;
  return { client, patches };
}

describe('patchStatus: a JSON merge patch of the difference, as kube-apiserver applies it', () => {
  it('leaves the status the desired one, and writes nothing when it already is', async () => {
    await fc.assert(
      fc.asyncProperty(stored, desired, async (current, want) => {
        const { client, patches } = recordingClient();
        const object = { apiVersion: 'example.io/v1', kind: 'Thing', metadata: { name: 'n', namespace: 'ns', uid: 'u-1', resourceVersion: '7' }, status: current };
        await patchStatus(client, Kind, object as KubeObject & { status?: object }, want as object);
        const expected = asStored(want);
        if (patches.length === 0) {
          assert.deepStrictEqual(current, expected, 'no write, but the status is not the desired one');
          return;
        }
        assert.equal(patches.length, 1);
        const body = patches[0] as { metadata: unknown; status: unknown };
        assert.deepStrictEqual(body.metadata, { uid: 'u-1', resourceVersion: '7' });
        assert.notDeepStrictEqual(current, expected, 'a write, but the status already was the desired one');
        assert.deepStrictEqual(applyMergePatch(current, body.status), expected);
      }),
      { numRuns: RUNS },
    );
  });

  it('mergePatchFrom: a key named like an inherited property is removed like any other', () => {
    assert.deepEqual(JSON.parse(JSON.stringify(mergePatchFrom({ constructor: 'x', toString: 'y' }, {}))), { constructor: null, toString: null });
  });
});
