import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { mergePatchFrom, patchStatus } from './index.ts';
import { defineCustomResource } from '../crd/index.ts';
import type { Condition, KubeObject, ResourceKind } from '../objects/index.ts';
import type { KubeClient } from '../client/index.ts';

test('mergePatchFrom sends only the difference, null for removals, arrays whole', () => {
  const from = { phase: 'Accepted', observedGeneration: 1, managed: { deployment: 'a', service: 'a' }, conditions: [{ type: 'A' }] };
  const to = { phase: 'Failed', observedGeneration: 1, conditions: [{ type: 'A' }, { type: 'B' }] };
  assert.deepEqual(mergePatchFrom(from, to), { phase: 'Failed', conditions: [{ type: 'A' }, { type: 'B' }], managed: null });
  assert.deepEqual(mergePatchFrom({ a: { b: 1, c: 2 } }, { a: { b: 1, c: 3 } }), { a: { c: 3 } });
  assert.deepEqual(mergePatchFrom(to, to), {});
});

// Typed at the call site: the status is checked against the object's own status type, so a
// status written inline (not first assigned to a typed variable) compiles, and a wrong one does not.
interface Tenant extends KubeObject {
  status?: { observedGeneration?: number; phase?: 'Ready' | 'Failed'; conditions?: Condition[] };
}
declare const TenantKind: ResourceKind<Tenant>;
export async function typedAtTheCallSite(client: KubeClient, t: Tenant, conditions: Condition[]): Promise<void> {
  await patchStatus(client, TenantKind, t, { ...t.status, observedGeneration: t.metadata.generation ?? 0, conditions });
  await patchStatus(client, TenantKind, t, { phase: 'Ready' });
  // @ts-expect-error a phase the status type does not have
  await patchStatus(client, TenantKind, t, { phase: 'Running' });
}

test('a status write to a kind whose CRD has no status subresource is refused before any request, saying so (the API server would answer 404, read as "the object is gone")', async () => {
  const { kind } = defineCustomResource({
    group: 'db.example.com', kind: 'Database', plural: 'databases', scope: 'Namespaced',
    versions: [{ name: 'v1', served: true, storage: true, schema: Type.Object({ spec: Type.Object({}), status: Type.Optional(Type.Object({ phase: Type.Optional(Type.String()) })) }) }],
  });
  const client = { patch: async () => assert.fail('no request is sent') } as unknown as KubeClient;
  const orders = { apiVersion: 'db.example.com/v1', kind: 'Database', metadata: { namespace: 'ns', name: 'orders', uid: 'u', resourceVersion: '1' }, spec: {} };
  await assert.rejects(patchStatus(client, kind, orders, { phase: 'Ready' }), /Database has no status subresource.*subresources: \{ status: true \}/);
});
