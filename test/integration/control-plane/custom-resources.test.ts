/**
 * Smoke test: a CustomResourceDefinition with a status subresource, printer columns and a CEL
 * validation rule is served and enforces its schema.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { testCluster, waitFor, withNamespace } from '../../support/cluster.ts';

test('a CRD with status subresource, printer columns and a CEL rule is served and enforced', async (t) => {
  const cluster = await testCluster();
  const ns = await withNamespace(t, 'cp-crd');
  const group = `t${randomBytes(4).toString('hex')}.smoke.converge.dev`;
  const crdName = `widgets.${group}`;
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: crdName },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [{
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        additionalPrinterColumns: [
          { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
          { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
        ],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['size'],
                properties: {
                  size: { type: 'integer', minimum: 1, maximum: 10 },
                  min: { type: 'integer' },
                  max: { type: 'integer' },
                },
                'x-kubernetes-validations': [{ rule: 'self.min <= self.max', message: 'min must not exceed max' }],
              },
              status: { type: 'object', properties: { phase: { type: 'string' } } },
            },
          },
        },
      }],
    },
  };
  const created = await cluster.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  t.after(() => cluster.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}`));
  await waitFor('CRD Established', async () => {
    const c = await cluster.request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}`);
    return c.body.status?.conditions?.some((x: { type: string; status: string }) => x.type === 'Established' && x.status === 'True');
  });

  const base = `/apis/${group}/v1/namespaces/${ns}/widgets`;
  const widget = (name: string, spec: Record<string, unknown>, status?: Record<string, unknown>) => ({
    apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name, namespace: ns }, spec, ...(status ? { status } : {}),
  });
  // The new resource may take a moment to appear in the API server's handlers.
  const ok = await waitFor('widget created', async () => {
    const r = await cluster.request('POST', base, widget('ok', { size: 3, min: 1, max: 2, unknown: 'pruned' }, { phase: 'ignored' }));
    return r.status === 201 && r;
  });
  assert.equal(ok.body.spec.unknown, undefined, 'unknown fields are pruned');
  assert.equal(ok.body.status, undefined, 'status is ignored on create (status subresource)');
  assert.equal(ok.body.metadata.generation, 1);

  const tooBig = await cluster.request('POST', base, widget('too-big', { size: 11, min: 1, max: 2 }));
  assert.equal(tooBig.status, 422);
  assert.match(tooBig.body.message, /spec\.size/);

  const missing = await cluster.request('POST', base, widget('missing', { min: 1, max: 2 }));
  assert.equal(missing.status, 422);
  assert.match(missing.body.message, /size: Required value/);

  const cel = await cluster.request('POST', base, widget('cel', { size: 1, min: 5, max: 2 }));
  assert.equal(cel.status, 422);
  assert.match(cel.body.message, /min must not exceed max/);

  const statusUpdate = await cluster.request('PATCH', `${base}/ok/status`, { status: { phase: 'Ready' } }, {
    contentType: 'application/merge-patch+json',
  });
  assert.equal(statusUpdate.status, 200, JSON.stringify(statusUpdate.body));
  assert.equal(statusUpdate.body.status.phase, 'Ready');
  assert.equal(statusUpdate.body.metadata.generation, 1, 'status writes do not bump generation');
  const specUpdate = await cluster.request('PATCH', `${base}/ok`, { spec: { size: 4 } }, {
    contentType: 'application/merge-patch+json',
  });
  assert.equal(specUpdate.body.metadata.generation, 2, 'spec writes bump generation');

  const table = await cluster.request('GET', base, undefined, {
    headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
  });
  assert.equal(table.status, 200);
  const columns = table.body.columnDefinitions.map((c: { name: string }) => c.name);
  assert.deepEqual(columns, ['Name', 'Size', 'Phase']);
  assert.deepEqual(table.body.rows[0].cells.slice(0, 3), ['ok', 4, 'Ready']);
});
