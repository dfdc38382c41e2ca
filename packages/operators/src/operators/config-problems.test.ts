import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { configPath, inSection, schemaProblems } from './config-problems.ts';

test('JSON pointers become the paths a person reads in the file', () => {
  assert.equal(configPath(''), '');
  assert.equal(configPath('/microservice/defaults/replicas'), 'microservice.defaults.replicas');
  assert.equal(configPath('/items/0/name', 'spec'), 'spec.items[0].name');
  assert.equal(configPath('/labels/app.kubernetes.io~1name'), 'labels.app.kubernetes.io/name');
});

test('a section problem becomes a line of the file around it', () => {
  assert.equal(inSection('provider', 'vendor.burst: expected integer'), 'provider.vendor.burst: expected integer');
  assert.equal(inSection('provider', '<top level>: expected object'), 'provider: expected object');
  assert.equal(inSection('items', '[0]: expected string'), 'items[0]: expected string');
});

test('schema problems are lower-case, without repeats, and a misspelt key gets the one it is near', () => {
  const schema = Type.Object({ microservice: Type.Optional(Type.Object({})), provider: Type.Optional(Type.Object({})) }, { additionalProperties: false });
  assert.deepEqual(schemaProblems(schema, { micrservice: 1, providr: 2, zzz: 3 }), [
    'micrservice: unexpected property (did you mean "microservice"?)',
    'providr: unexpected property (did you mean "provider"?)',
    'zzz: unexpected property',
  ]);
  assert.deepEqual(schemaProblems(schema, 'x'), ['<top level>: expected object']);
  assert.deepEqual(schemaProblems(schema, {}), []);
});
