import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type, type TSchema } from '@sinclair/typebox';
import { toStructuralSchema, SchemaConversionError } from './structural-schema.ts';
import { ConditionsSchema, celRule } from './common-schemas.ts';

test('scalars keep their bounds, patterns, formats, defaults and CEL rules', () => {
  const out = toStructuralSchema(
    Type.Object({
      image: Type.String({ minLength: 1, maxLength: 10, pattern: '^[a-z]+$', 'x-kubernetes-validations': [celRule('self != "x"', 'not x')] }),
      port: Type.Integer({ minimum: 1, maximum: 65535, format: 'int32', default: 80 }),
      ratio: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'a ratio' })),
      on: Type.Optional(Type.Boolean()),
    }),
  );
  assert.deepEqual(out, {
    type: 'object',
    properties: {
      image: { type: 'string', minLength: 1, maxLength: 10, pattern: '^[a-z]+$', 'x-kubernetes-validations': [{ rule: 'self != "x"', message: 'not x' }] },
      port: { type: 'integer', format: 'int32', default: 80, minimum: 1, maximum: 65535 },
      ratio: { description: 'a ratio', type: 'number', minimum: 0, exclusiveMinimum: true },
      on: { type: 'boolean' },
    },
    required: ['image', 'port'],
  });
});

test('TypeBox symbols, $id and additionalProperties: false are dropped', () => {
  const schema = Type.Object({ a: Type.String() }, { $id: 'Thing', additionalProperties: false });
  const out = toStructuralSchema(schema);
  assert.deepEqual(out, { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] });
  assert.deepEqual(Object.getOwnPropertySymbols(out), []);
  assert.deepEqual(Object.getOwnPropertySymbols(out.properties!.a!), []);
  // The input is untouched.
  assert.equal(schema.$id, 'Thing');
});

test('unions of literals become enums; integer|string becomes int-or-string; X|null becomes nullable', () => {
  const out = toStructuralSchema(
    Type.Object({
      phase: Type.Union([Type.Literal('A'), Type.Literal('B')], { description: 'phase' }),
      one: Type.Literal(3),
      target: Type.Union([Type.Integer(), Type.String()], { description: 'port' }),
      maybe: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
    }),
  );
  assert.deepEqual(out.properties, {
    phase: { description: 'phase', type: 'string', enum: ['A', 'B'] },
    one: { type: 'number', enum: [3] },
    target: { description: 'port', 'x-kubernetes-int-or-string': true },
    maybe: { type: 'string', nullable: true, minLength: 1 },
  });
});

test('records become additionalProperties, unknown becomes preserve-unknown-fields', () => {
  const out = toStructuralSchema(
    Type.Object({ labels: Type.Record(Type.String(), Type.String()), blob: Type.Unknown(), list: Type.Array(Type.Any()) }),
  );
  assert.deepEqual(out.properties, {
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    blob: { 'x-kubernetes-preserve-unknown-fields': true },
    list: { type: 'array', items: { 'x-kubernetes-preserve-unknown-fields': true } },
  });
});

test('conditions convert to a list-type map keyed by type', () => {
  const out = toStructuralSchema(ConditionsSchema());
  assert.equal(out.type, 'array');
  assert.equal(out['x-kubernetes-list-type'], 'map');
  assert.deepEqual(out['x-kubernetes-list-map-keys'], ['type']);
  assert.deepEqual(out.items?.required, ['type', 'status', 'lastTransitionTime', 'reason', 'message']);
  assert.deepEqual(out.items?.properties?.status?.enum, ['True', 'False', 'Unknown']);
  assert.equal(out.items?.properties?.lastTransitionTime?.format, 'date-time');
});

test('value validations under a typed node are kept without types', () => {
  const out = toStructuralSchema(
    Type.Unsafe({ type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, anyOf: [{ required: ['a'] }, { required: ['b'] }] }),
  );
  assert.deepEqual(out.anyOf, [{ required: ['a'] }, { required: ['b'] }]);
});

test('non-structural schemas are rejected with the path', () => {
  const cases: Array<[unknown, RegExp]> = [
    [Type.Object({ a: Type.Union([Type.String(), Type.Boolean()]) }), /^\.a: unions other than/],
    [Type.Object({ t: Type.Tuple([Type.String(), Type.Number()]) }), /^\.t: tuples/],
    [Type.Object({ s: Type.Array(Type.String(), { uniqueItems: true }) }), /^\.s: uniqueItems/],
    [{ type: 'object', properties: { r: { $ref: 'Other' } } }, /^\.r: keyword "\$ref"/],
    [{ type: 'object', properties: { x: { type: 'string', 'x-kubernetes-list-type': 'map' } } }, /only applies to arrays/],
    [{ type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } }, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] }, /must be required or have a default/],
    [{ type: 'string', 'x-kubernetes-validations': [{ message: 'no rule' }] }, /no CEL expression/],
    [{ type: 'string', 'x-kubernetes-validations': [{ rule: 'true', mesage: 'typo' }] }, /unknown key "mesage"/],
    [{ type: 'string', pattern: '^(?=a)' }, /lookaround/],
    [{ type: 'object', anyOf: [{ type: 'object' }] }, /not allowed inside a value validation/],
    [{ minLength: 1 }, /needs a type/],
    [{ type: 'object', required: ['missing'], properties: {} }, /not declared/],
    // Named like Object.prototype's properties: declared only when the schema declares them.
    [{ type: 'object', required: ['constructor'], properties: {} }, /required property "constructor" is not declared/],
    [{ type: 'object', required: ['toString'] }, /required property "toString" is not declared/],
  ];
  for (const [schema, message] of cases) {
    assert.throws(() => toStructuralSchema(schema), (e: unknown) => e instanceof SchemaConversionError && message.test(e.message), JSON.stringify(schema));
  }
});

test('a bound that is not a value of its own numeric type fails at definition time (the API server would refuse every value)', () => {
  const refused = (schema: TSchema, why: RegExp) => assert.throws(() => toStructuralSchema(Type.Object({ spec: schema })), (err: Error) => err instanceof SchemaConversionError && why.test(err.message));
  refused(Type.Integer({ multipleOf: 0.5 }), /\.spec: multipleOf 0\.5 is not a valid integer: kube-apiserver would refuse every value/);
  refused(Type.Integer({ minimum: -1.5 }), /minimum -1\.5 is not a valid integer/);
  refused(Type.Integer({ format: 'int32', maximum: 2 ** 40 }), /maximum 1099511627776 is not a valid integer \(int32\)/);
  refused(Type.Number({ format: 'float', maximum: 1e300 }), /maximum 1e\+300 is not a valid number \(float\)/);
  // Formats the API server drops for objects do not narrow the bounds; integral bounds are fine.
  assert.equal(toStructuralSchema(Type.Integer({ format: 'uint8', minimum: -5, multipleOf: 2 })).minimum, -5);
  assert.equal(toStructuralSchema(Type.Number({ minimum: 0.5, multipleOf: 0.25 })).multipleOf, 0.25);
});

test('examples become a single example', () => {
  assert.deepEqual(toStructuralSchema(Type.String({ examples: ['a', 'b'] })), { type: 'string', example: 'a' });
});

test('a default that does not fit its field fails at definition time, naming the field and why', () => {
  const refused = (schema: TSchema, why: RegExp) => assert.throws(() => toStructuralSchema(Type.Object({ spec: schema })), (err: Error) => err instanceof SchemaConversionError && why.test(err.message));
  refused(Type.Object({ a: Type.Integer({ multipleOf: 2, default: 3 }) }), /\.spec\.a: default 3 does not fit the schema: .*not a multiple of 2/);
  refused(Type.String({ format: 'date-time', default: 'abc' }), /not a date-time/);
  refused(Type.String({ maxLength: 2, default: 'abc' }), /longer than 2 characters/);
  refused(Type.Integer({ default: '3' }), /must be of type integer/);
  refused(Type.Object({ a: Type.String() }, { default: { b: 1 } }), /\.b is not a field of the schema/);
  refused(Type.Object({ a: Type.String({ default: 'x' }) }, { default: { toString: 'x' } }), /\.toString is not a field of the schema/);
  refused(Type.Object({ a: Type.String() }, { default: {} }), /\.a is required and the default leaves it out/);
  // A required field named like a property every object inherits is still looked for on the default itself.
  refused(Type.Object({ constructor: Type.String() }, { default: {} }), /\.constructor is required and the default leaves it out/);
  // The API server applies no nested default to a default: a required field with a default of its
  // own must still be written out (CI's differential seed -744297205).
  refused(Type.Object({ a: Type.Boolean({ default: true }) }, { default: {} }), /\.a is required and the default leaves it out/);
  refused(Type.Union([Type.Integer(), Type.String()], { default: [1] }), /an integer or a string/);
  // kube-openapi's numeric checks: a value JSON writes as an integer is checked against truncated
  // bounds (CI's differential run found multipleOf 0.5 on an integer), and values must fit the format.
  refused(Type.Number({ multipleOf: 0.5, default: 3 }), /not a multiple of 0\.5 \(the API server checks an integer against 0\)/);
  refused(Type.Number({ multipleOf: 2.5, default: 5 }), /not a multiple of 2\.5/);
  refused(Type.Integer({ format: 'int32', default: 2 ** 31 }), /out of range for integer \(int32\)/);
  refused(Type.Integer({ format: 'uint32', default: -1 }), /out of range for integer \(uint32\)/);
  refused(Type.Integer({ default: 2 ** 63 }), /out of range for integer/);
  refused(Type.Integer({ format: 'uint64', default: 2 ** 63 }), /out of range for integer \(uint64\)/);
  refused(Type.Number({ format: 'float', default: 1e39 }), /out of range for number \(float\)/);
  // Go's int64(1e39) on amd64 is -2^63: every integer is above such a maximum (the differential run found it).
  refused(Type.Number({ maximum: 1e39, default: 0 }), /above the maximum 1e\+39 \(the API server checks an integer against -9223372036854776000\)/);
  assert.equal(toStructuralSchema(Type.Number({ maximum: 1e39, default: 0.5 })).default, 0.5, 'a float is compared as a float');
  // Fitting defaults are kept, the server's leniency included: an integer is checked against a truncated bound.
  assert.equal(toStructuralSchema(Type.Number({ minimum: 0.5, default: 0 })).default, 0);
  assert.equal(toStructuralSchema(Type.Number({ multipleOf: 0.5, default: 2.5 })).default, 2.5);
  assert.equal(toStructuralSchema(Type.Integer({ format: 'int32', default: -(2 ** 31) })).default, -(2 ** 31));
  // Fitting defaults are kept.
  const out = toStructuralSchema(Type.Object({ a: Type.Integer({ multipleOf: 2, default: 4 }), b: Type.String({ format: 'date-time', default: '2026-12-05T00:00:00Z' }), c: Type.Object({ d: Type.String({ default: 'x' }) }, { default: { d: 'y' } }), e: Type.Object({ f: Type.Optional(Type.String()) }, { default: {} }) }));
  assert.equal(out.properties?.a?.default, 4);
  assert.deepEqual(out.properties?.c?.default, { d: 'y' });
  assert.deepEqual(out.properties?.e?.default, {}, 'an optional field may be left out');
});
