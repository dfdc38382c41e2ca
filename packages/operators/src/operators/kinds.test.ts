import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MicroserviceCrdKinds, MicroserviceKind, MicroserviceV1alpha1Kind } from './microservice/api/index.ts';
import { DigitalHumanProviderCrdKinds, DigitalHumanProviderKind, DigitalHumanProviderV1alpha1Kind } from './provider/api/index.ts';

// The kinds in microservice/api/kind.ts and provider/api/kind.ts (schema-free: what the operator
// process and the one-shot commands load) against the kinds each CRD defines from its schemas.
test('the schema-free descriptors are the kinds the CRDs define', () => {
  assert.deepEqual({ ...MicroserviceCrdKinds['v1'] }, { ...MicroserviceKind }, 'the CRD\'s v1 is kind.ts\'s');
  assert.deepEqual({ ...MicroserviceCrdKinds['v1alpha1'] }, { ...MicroserviceV1alpha1Kind }, 'the CRD\'s v1alpha1 is kind.ts\'s');
  assert.deepEqual({ ...DigitalHumanProviderCrdKinds['v1'] }, { ...DigitalHumanProviderKind }, 'the CRD\'s v1 is kind.ts\'s');
  assert.deepEqual({ ...DigitalHumanProviderCrdKinds['v1alpha1'] }, { ...DigitalHumanProviderV1alpha1Kind }, 'the CRD\'s v1alpha1 is kind.ts\'s');
});
