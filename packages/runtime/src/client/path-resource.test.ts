import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resourceOfPath } from './path-resource.ts';

test('the resource a raw request path names, as a metric label: the plural and a subresource, never a name or a namespace', () => {
  const cases: [string, string][] = [
    ['/api/v1/namespaces/default/pods/pod-a/eviction', 'pods/eviction'],
    ['/api/v1/namespaces/default/pods/pod-b/eviction', 'pods/eviction'],
    ['/apis/apps/v1/namespaces/team-a/deployments/web/scale', 'deployments/scale'],
    ['/api/v1/namespaces/ns/serviceaccounts/sa/token', 'serviceaccounts/token'],
    ['/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', 'selfsubjectaccessreviews'],
    ['/api/v1/namespaces', 'namespaces'],
    ['/api/v1/namespaces/team-a', 'namespaces'],
    ['/api/v1/namespaces/team-a/status', 'namespaces/status'],
    ['/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x.example.com/status', 'customresourcedefinitions/status'],
    ['/api/v1/nodes/node-1/proxy/metrics', 'nodes/proxy'],
    ['/apis/apps/v1?timeout=5s', 'discovery'],
    ['/api', 'discovery'],
    ['/version', 'other'],
    ['/openapi/v3/apis/apps/v1', 'other'],
  ];
  for (const [path, want] of cases) assert.equal(resourceOfPath(path), want, path);
});
