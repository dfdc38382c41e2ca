import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiErrorFromResponse } from '@converge/runtime';
import { rejectionMessage } from './apply-rejection.ts';

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
  const m = rejectionMessage(immutableSelector, 'Deployment', 'legacy', true, true);
  assert.equal(
    m,
    'the API server refused to adopt (update) Deployment legacy: spec.selector: field is immutable. The operator cannot change spec.selector in place: delete Deployment legacy and the operator creates it anew with the desired state, or remove the platform.example.io/handover-to annotation from it and give the Microservice another name',
  );
  assert.match(rejectionMessage(immutableSelector, 'Deployment', 'legacy', true, false), /^the API server refused to update Deployment legacy: .*delete Deployment legacy and the operator creates it anew with the desired state$/);
});

test('a refused create, or an answer without causes, still says what happened', () => {
  const invalid = apiErrorFromResponse(422, { kind: 'Status', reason: 'Invalid', code: 422, message: 'Service "x" is invalid: spec.ports[0].port: Invalid value: 0: must be between 1 and 65535', details: { causes: [{ field: 'spec.ports[0].port', message: 'Invalid value: 0: must be between 1 and 65535' }] } });
  assert.match(rejectionMessage(invalid, 'Service', 'x', false, false), /^the API server refused to create Service x: spec\.ports\[0\]\.port: must be between 1 and 65535\. The operator tries again when/);
  const bare = apiErrorFromResponse(422, { kind: 'Status', reason: 'Invalid', code: 422, message: 'something is wrong' });
  assert.match(rejectionMessage(bare, 'Service', 'x', true, false), /refused to update Service x: something is wrong\./);
});
