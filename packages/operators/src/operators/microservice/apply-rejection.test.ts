import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiErrorFromResponse } from '@converge/runtime';
import { refusedInPlace, rejectionMessage } from './apply-rejection.ts';

// What kube-apiserver answers when a PUT changes a Deployment's selector.
const immutableSelector = apiErrorFromResponse(422, {
  kind: 'Status',
  status: 'Failure',
  reason: 'Invalid',
  code: 422,
  message: 'Deployment.apps "legacy" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"legacy"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
  details: { name: 'legacy', kind: 'Deployment', causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"legacy"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable', field: 'spec.selector' }] },
});

test('a refused update names the object, the field and what to do', () => {
  const m = rejectionMessage(immutableSelector, 'Deployment', 'legacy', true, true, 600_000);
  assert.equal(
    m,
    'the API server refused to adopt (update) Deployment legacy: spec.selector: field is immutable. The operator cannot change spec.selector in place: delete Deployment legacy and the operator creates it anew with the desired state, or remove the platform.example.io/handover-to annotation from it and give the Microservice another name',
  );
  assert.match(rejectionMessage(immutableSelector, 'Deployment', 'legacy', true, false, 600_000), /^the API server refused to update Deployment legacy: .*delete Deployment legacy and the operator creates it anew with the desired state$/);
});

test('a refused create, or an answer without causes, still says what happened', () => {
  const invalid = apiErrorFromResponse(422, { kind: 'Status', reason: 'Invalid', code: 422, message: 'Service "x" is invalid: spec.ports[0].port: Invalid value: 0: must be between 1 and 65535', details: { causes: [{ field: 'spec.ports[0].port', message: 'Invalid value: 0: must be between 1 and 65535' }] } });
  assert.equal(
    rejectionMessage(invalid, 'Service', 'x', false, false, 600_000),
    'the API server refused to create Service x: spec.ports[0].port: must be between 1 and 65535. The operator tries again when the Microservice or Service x changes, and every 10 minutes (a rule of the cluster, such as an admission policy, may have changed)',
  );
  const bare = apiErrorFromResponse(422, { kind: 'Status', reason: 'Invalid', code: 422, message: 'something is wrong' });
  assert.match(rejectionMessage(bare, 'Service', 'x', true, false, 3_000), /refused to update Service x: something is wrong\./);
});

test('only a field the existing object cannot change is refused in place; other refusals may be lifted by the cluster', () => {
  assert.equal(refusedInPlace(immutableSelector, true), true);
  assert.equal(refusedInPlace(immutableSelector, false), false, 'a create has no object to be immutable');
  const policy = apiErrorFromResponse(422, { kind: 'Status', reason: 'Invalid', code: 422, message: 'deployments.apps "web" is forbidden: ValidatingAdmissionPolicy \'freeze\' with binding \'freeze\' denied request: Deployments are frozen in this namespace' });
  assert.equal(refusedInPlace(policy, true), false);
  assert.match(rejectionMessage(policy, 'Deployment', 'web', true, false, 3_000), /every 3 seconds \(a rule of the cluster/);
});
