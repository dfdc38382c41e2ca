import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DigitalHumanProviderCrd, DigitalHumanProviderKind, PROVIDER_FINALIZER, DEFAULT_CREDENTIALS_KEY } from './index.ts';

const version = DigitalHumanProviderCrd.spec.versions[0]!;
const spec = version.schema.openAPIV3Schema.properties!.spec!;

test('two served versions: v1 the hub and storage version, v1alpha1 deprecated; both carry the endpoint rule', () => {
  assert.deepEqual(DigitalHumanProviderCrd.spec.versions.map((v) => [v.name, v.served, v.storage, v.deprecated ?? false]), [['v1', true, true, false], ['v1alpha1', true, false, true]]);
  assert.equal(DigitalHumanProviderCrd.spec.conversion?.strategy, 'Webhook');
  const alpha = DigitalHumanProviderCrd.spec.versions[1]!.schema.openAPIV3Schema;
  assert.deepEqual(alpha.properties!.spec!.required, ['endpoint', 'region', 'credentialsSecretRef']);
  assert.ok(alpha['x-kubernetes-validations']?.some((r) => r.fieldPath === '.spec.endpoint'));
  assert.deepEqual(alpha.properties!.status, version.schema.openAPIV3Schema.properties!.status, 'one status schema');
});

test('spec.limits (v1 only): positive, bounded', () => {
  const limits = spec.properties!.limits!;
  assert.deepEqual(Object.keys(limits.properties!), ['maxConcurrency', 'requestsPerMinute', 'dailyQuota']);
  for (const l of Object.values(limits.properties!)) assert.equal(l.minimum, 1);
});

test('the kind and the CRD name the same resource', () => {
  assert.equal(DigitalHumanProviderKind.apiVersion, 'dhp.example.com/v1');
  assert.equal(DigitalHumanProviderKind.plural, 'digitalhumanproviders');
  assert.equal(DigitalHumanProviderCrd.metadata.name, 'digitalhumanproviders.dhp.example.com');
  assert.deepEqual(DigitalHumanProviderCrd.spec.names.shortNames, ['dhp']);
  assert.deepEqual(version.subresources, { status: {} });
  assert.equal(PROVIDER_FINALIZER, 'dhp.example.com/provider-cleanup');
});

test('spec: https endpoint, immutable non-empty region, credentials reference', () => {
  assert.deepEqual(spec.required, ['endpoint', 'region', 'credentials']);
  assert.equal(spec.properties!.endpoint!.pattern, '^https://');
  const region = spec.properties!.region!;
  assert.equal(region.minLength, 1);
  assert.deepEqual(region['x-kubernetes-validations']?.map((r) => r.rule), ['self == oldSelf', "self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')"]);
  assert.match(region['x-kubernetes-validations']?.[0]?.message ?? '', /immutable/);
  assert.match(region['x-kubernetes-validations']?.[1]?.message ?? '', /lower-case letters, digits and dashes.*e\.g\. ap-northeast-1/);
  const ref = spec.properties!.credentials!.properties!.secretRef!;
  assert.deepEqual(ref.required, ['name']);
  assert.equal(ref.properties!.key!.default, DEFAULT_CREDENTIALS_KEY);
  assert.equal(spec.properties!.displayName!.type, 'string');
});

test('status and printer columns', () => {
  const status = version.schema.openAPIV3Schema.properties!.status!;
  assert.deepEqual(Object.keys(status.properties!), ['observedGeneration', 'providerID', 'instanceEndpoint', 'createRequestedAt', 'conditions', 'usage', 'limits', 'limitedBy', 'usable', 'recommendation']);
  assert.deepEqual(Object.keys(status.properties!.usage!.properties!), ['callsToday', 'dailyQuota', 'quotaRemaining', 'throttledRequests', 'throttleWindowSeconds', 'quotaResetAt', 'observedAt']);
  assert.deepEqual(
    version.additionalPrinterColumns!.filter((c) => !c.priority).map((c) => c.name),
    ['Region', 'Ready', 'Quota Left', 'Limited By', 'Age'],
  );
  assert.deepEqual(version.additionalPrinterColumns!.filter((c) => c.priority).map((c) => c.name), ['ProviderID', 'Reason', 'Spec Applied', 'Endpoint'], '-o wide: a refused change shows though Ready is True');
  assert.deepEqual(version.selectableFields, [{ jsonPath: '.spec.region' }, { jsonPath: '.status.usable' }]);
  assert.equal(DigitalHumanProviderCrd.spec.versions[1]!.selectableFields, undefined, 'v1 only: identical per-version fields are folded into a top-level one the API server refuses here');
});

test('spec.endpoint is immutable once an instance may live at it (a root CEL transition rule)', () => {
  const rules = version.schema.openAPIV3Schema['x-kubernetes-validations'] ?? [];
  const rule = rules.find((r) => r.fieldPath === '.spec.endpoint');
  assert.ok(rule, JSON.stringify(rules));
  assert.match(rule.rule, /oldSelf\.status\.providerID/);
  assert.match(rule.rule, /oldSelf\.status\.instanceEndpoint/);
  assert.match(rule.rule, /self\.spec\.endpoint == oldSelf\.spec\.endpoint/);
  assert.equal(rule.reason, 'FieldValueForbidden');
  assert.match(rule.message ?? '', /Delete this DigitalHumanProvider/);
});
