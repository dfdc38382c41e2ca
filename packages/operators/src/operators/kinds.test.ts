import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DigitalHumanProviderKindDescriptor, MicroserviceKindDescriptor } from './kinds.ts';
import { MicroserviceKind } from './microservice/api/index.ts';
import { DigitalHumanProviderKind } from './provider/api/index.ts';

test('the schema-free descriptors are the kinds the CRDs define', () => {
  assert.deepEqual({ ...MicroserviceKindDescriptor }, { ...MicroserviceKind });
  assert.deepEqual({ ...DigitalHumanProviderKindDescriptor }, { ...DigitalHumanProviderKind });
});
