/**
 * Turns a TypeBox (JSON Schema) schema into a *structural* OpenAPI v3 schema, the only kind an
 * `apiextensions.k8s.io/v1` CRD accepts: every node has a type (or is int-or-string / preserves
 * unknown fields), unions are value validations only, no `$ref`, no `const`, no
 * `patternProperties`, no `uniqueItems`.
 *
 * The conversion is strict: a keyword the API server would reject, or that this converter does not
 * know, throws a `SchemaConversionError` naming the path, so a mistake fails at definition time
 * (import) rather than when the CRD is installed.
 *
 * Mappings from TypeBox output:
 * - `Type.Union` of literals of one type → `enum`; `Type.Literal` → a one-value `enum`.
 * - `Type.Union([Type.Integer(), Type.String()])` → `x-kubernetes-int-or-string: true`.
 * - `Type.Union([X, Type.Null()])` → `X` with `nullable: true`.
 * - `Type.Record(Type.String(), X)` → `additionalProperties: X`.
 * - `Type.Unknown()` / `Type.Any()` → `x-kubernetes-preserve-unknown-fields: true`.
 * - `additionalProperties: false` beside `properties` is dropped (the API server prunes unknown
 *   fields anyway); `additionalProperties: true` becomes `x-kubernetes-preserve-unknown-fields`.
 * - A numeric `exclusiveMinimum: n` (JSON Schema 2019+) becomes `minimum: n, exclusiveMinimum: true`.
 * - TypeBox's symbols, `$id`, `$schema`, `$comment`, `readOnly`, `writeOnly` are dropped;
 *   `examples[0]` becomes `example`.
 * - `x-kubernetes-*` extensions (CEL `x-kubernetes-validations`, list types, …), `default`,
 *   `description`, `format`, enums and bounds are kept. A `default` that does not fit its node
 *   (`default-check.ts`) throws, as the API server would refuse the CRD for it; so does a numeric
 *   bound that is not a value of its own type (`minimum: 0.5` on an integer), for which the API
 *   server would accept the CRD and refuse every value of the field.
 * @module
 */
import type { JSONSchemaProps, ValidationRule } from './types.ts';
import { defaultProblem } from './default-check.ts';
import { SchemaConversionError } from './schema-conversion-error.ts';
import { checkNumericBounds, checkPattern, checkStructure } from './structural-checks.ts';

export { SchemaConversionError } from './schema-conversion-error.ts';

type Json = Record<string, unknown>;

const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);

/** Keywords copied as they are (after a light type check). */
const PLAIN_NUMBER_KEYS = ['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties', 'multipleOf'] as const;

/** Dropped silently: TypeBox bookkeeping and annotations a CRD has no place for. */
const DROPPED = new Set(['$id', '$schema', '$comment', 'readOnly', 'writeOnly']);

const LIST_TYPES = new Set(['atomic', 'set', 'map']);
const MAP_TYPES = new Set(['atomic', 'granular']);
const RULE_KEYS = new Set(['rule', 'message', 'messageExpression', 'reason', 'fieldPath', 'optionalOldSelf']);
const RULE_REASONS = new Set(['FieldValueInvalid', 'FieldValueForbidden', 'FieldValueRequired', 'FieldValueDuplicate']);

/** Output key order, so generated YAML reads top-down like hand-written CRDs. */
const KEY_ORDER = [
  'description', 'title', 'type', 'format', 'nullable', 'enum', 'default', 'example',
  'minLength', 'maxLength', 'pattern', 'minimum', 'exclusiveMinimum', 'maximum', 'exclusiveMaximum', 'multipleOf',
  'items', 'minItems', 'maxItems',
  'properties', 'required', 'additionalProperties', 'minProperties', 'maxProperties',
  'anyOf', 'allOf', 'oneOf', 'not',
  'x-kubernetes-int-or-string', 'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource',
  'x-kubernetes-list-type', 'x-kubernetes-list-map-keys', 'x-kubernetes-map-type', 'x-kubernetes-validations',
];

/**
 * Converts one schema node (and everything below it). `path` prefixes error messages.
 * Pure: the input is not modified; the output shares nothing with it.
 */
export function toStructuralSchema(schema: unknown, path = ''): JSONSchemaProps {
  return ordered(convert(schema, path));
}

function convert(input: unknown, path: string): Json {
  const node = asObject(input, path);
  const out: Json = {};

  // Unions first: they decide the node's type.
  if (node.anyOf !== undefined && node.type === undefined) return convertUnion(node, path);
  if (node.const !== undefined && node.type === undefined) throw new SchemaConversionError(path, '`const` needs a `type`');

  let type = node.type;
  if (Array.isArray(type)) {
    const nonNull = type.filter((t) => t !== 'null');
    if (nonNull.length !== 1) throw new SchemaConversionError(path, `type ${JSON.stringify(type)} is not structural`);
    if (nonNull.length !== type.length) out.nullable = true;
    type = nonNull[0];
  }
  if (type !== undefined) {
    if (typeof type !== 'string' || !TYPES.has(type)) throw new SchemaConversionError(path, `unsupported type ${JSON.stringify(type)}`);
    out.type = type;
  }

  for (const [key, value] of Object.entries(node)) {
    if (key === 'type' || DROPPED.has(key)) continue;
    switch (key) {
      case 'description':
      case 'title':
      case 'format':
      case 'pattern':
        if (typeof value !== 'string') throw new SchemaConversionError(path, `${key} must be a string`);
        if (key === 'pattern') checkPattern(value, path);
        out[key] = value;
        break;
      case 'default':
      case 'example':
        out[key] = structuredClone(value);
        break;
      case 'examples':
        if (Array.isArray(value) && value.length > 0) out.example = structuredClone(value[0]);
        break;
      case 'nullable':
        if (typeof value !== 'boolean') throw new SchemaConversionError(path, 'nullable must be a boolean');
        if (value) out.nullable = true;
        break;
      case 'const':
        out.enum = [structuredClone(value)];
        break;
      case 'enum':
        if (!Array.isArray(value) || value.length === 0) throw new SchemaConversionError(path, 'enum must be a non-empty array');
        out.enum = structuredClone(value);
        break;
      case 'minimum':
      case 'maximum':
        out[key] = number(value, path, key);
        break;
      case 'exclusiveMinimum':
      case 'exclusiveMaximum': {
        const bound = key === 'exclusiveMinimum' ? 'minimum' : 'maximum';
        if (typeof value === 'boolean') {
          out[key] = value;
        } else {
          if (node[bound] !== undefined) throw new SchemaConversionError(path, `both ${bound} and a numeric ${key}`);
          out[bound] = number(value, path, key);
          out[key] = true;
        }
        break;
      }
      case 'items':
        if (Array.isArray(value)) throw new SchemaConversionError(path, 'tuples (array-valued items) are not structural');
        out.items = convert(value, `${path}[*]`);
        break;
      case 'properties': {
        const properties: Json = {};
        for (const [name, sub] of Object.entries(asObject(value, path))) properties[name] = convert(sub, `${path}.${name}`);
        out.properties = properties;
        break;
      }
      case 'required':
        if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new SchemaConversionError(path, 'required must be a list of names');
        if (value.length > 0) out.required = [...value];
        break;
      case 'additionalProperties':
        if (value === false) {
          if (node.properties === undefined) throw new SchemaConversionError(path, '`additionalProperties: false` without properties allows nothing');
        } else if (value === true) {
          out['x-kubernetes-preserve-unknown-fields'] = true;
        } else {
          if (node.properties !== undefined) throw new SchemaConversionError(path, 'additionalProperties and properties are mutually exclusive');
          out.additionalProperties = convert(value, `${path}[*]`);
        }
        break;
      case 'patternProperties': {
        const entries = Object.entries(asObject(value, path));
        const [first] = entries;
        if (entries.length !== 1 || !first || !['^(.*)$', '^.*$'].includes(first[0]) || node.properties !== undefined) {
          throw new SchemaConversionError(path, 'patternProperties is not structural (only Type.Record(Type.String(), X) is converted)');
        }
        out.additionalProperties = convert(first[1], `${path}[*]`);
        break;
      }
      case 'uniqueItems':
        if (value === true) throw new SchemaConversionError(path, 'uniqueItems: true is not allowed in CRDs; use x-kubernetes-list-type: set');
        break;
      case 'anyOf':
      case 'allOf':
      case 'oneOf':
        if (!Array.isArray(value)) throw new SchemaConversionError(path, `${key} must be a list`);
        out[key] = value.map((v, i) => valueValidation(v, `${path}<${key}[${i}]>`));
        break;
      case 'not':
        out.not = valueValidation(value, `${path}<not>`);
        break;
      case 'x-kubernetes-validations':
        out[key] = validationRules(value, path);
        break;
      case 'x-kubernetes-preserve-unknown-fields':
      case 'x-kubernetes-embedded-resource':
      case 'x-kubernetes-int-or-string':
        if (typeof value !== 'boolean') throw new SchemaConversionError(path, `${key} must be a boolean`);
        if (value) out[key] = true;
        break;
      case 'x-kubernetes-list-type':
        if (typeof value !== 'string' || !LIST_TYPES.has(value)) throw new SchemaConversionError(path, `${key} must be atomic, set or map`);
        out[key] = value;
        break;
      case 'x-kubernetes-map-type':
        if (typeof value !== 'string' || !MAP_TYPES.has(value)) throw new SchemaConversionError(path, `${key} must be atomic or granular`);
        out[key] = value;
        break;
      case 'x-kubernetes-list-map-keys':
        if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string')) {
          throw new SchemaConversionError(path, `${key} must be a non-empty list of names`);
        }
        out[key] = [...value];
        break;
      default:
        if ((PLAIN_NUMBER_KEYS as readonly string[]).includes(key)) {
          out[key] = number(value, path, key);
          break;
        }
        throw new SchemaConversionError(path, `keyword ${JSON.stringify(key)} is not supported in a structural CRD schema`);
    }
  }

  checkStructure(out, path);
  checkNumericBounds(out, path);
  if (out.default !== undefined) {
    const problem = defaultProblem(out, out.default);
    if (problem) throw new SchemaConversionError(path, `default ${JSON.stringify(out.default)} does not fit the schema: ${problem}`);
  }
  return out;
}

/** A type-less `anyOf` node: enum of literals, int-or-string, or nullable X. */
function convertUnion(node: Json, path: string): Json {
  const branches = node.anyOf;
  if (!Array.isArray(branches) || branches.length === 0) throw new SchemaConversionError(path, 'anyOf must be a non-empty list');
  const objects = branches.map((b, i) => asObject(b, `${path}<anyOf[${i}]>`));
  const rest: Json = { ...node };
  delete rest.anyOf;

  // Union of literals -> enum.
  if (objects.every((b) => b.const !== undefined)) {
    const types = new Set(objects.map((b) => b.type ?? typeof b.const));
    if (types.size !== 1) throw new SchemaConversionError(path, 'an enum must have values of one type');
    const [type] = types;
    return convert({ ...rest, type, enum: objects.map((b) => b.const) }, path);
  }

  // X | null -> nullable X.
  const nonNull = objects.filter((b) => b.type !== 'null');
  if (nonNull.length === 1 && objects.length === 2) {
    return { ...convert({ ...nonNull[0], ...rest }, path), nullable: true };
  }

  // integer | string -> int-or-string.
  const types = objects.map((b) => b.type);
  if (objects.length === 2 && types.includes('string') && (types.includes('integer') || types.includes('number'))) {
    return convert({ ...rest, 'x-kubernetes-int-or-string': true }, path);
  }

  throw new SchemaConversionError(
    path,
    'unions other than literal enums, integer|string and X|null are not structural; give the node a type and use anyOf for value validations only',
  );
}

/** Inside anyOf/allOf/oneOf/not: no types, defaults, descriptions or extensions (structural rule). */
function valueValidation(input: unknown, path: string): Json {
  const node = asObject(input, path);
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED.has(key) || key === 'examples') continue;
    switch (key) {
      case 'required':
        if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new SchemaConversionError(path, 'required must be a list of names');
        out.required = [...value];
        break;
      case 'properties': {
        const properties: Json = {};
        for (const [name, sub] of Object.entries(asObject(value, path))) properties[name] = valueValidation(sub, `${path}.${name}`);
        out.properties = properties;
        break;
      }
      case 'items':
        out.items = valueValidation(value, `${path}[*]`);
        break;
      case 'anyOf':
      case 'allOf':
      case 'oneOf':
        if (!Array.isArray(value)) throw new SchemaConversionError(path, `${key} must be a list`);
        out[key] = value.map((v, i) => valueValidation(v, `${path}<${key}[${i}]>`));
        break;
      case 'not':
        out.not = valueValidation(value, `${path}<not>`);
        break;
      case 'enum':
        out.enum = structuredClone(value);
        break;
      case 'const':
        out.enum = [structuredClone(value)];
        break;
      case 'pattern':
        if (typeof value !== 'string') throw new SchemaConversionError(path, 'pattern must be a string');
        checkPattern(value, path);
        out.pattern = value;
        break;
      case 'format':
        out.format = value;
        break;
      case 'minimum':
      case 'maximum':
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        out[key] = value;
        break;
      default:
        if ((PLAIN_NUMBER_KEYS as readonly string[]).includes(key)) {
          out[key] = number(value, path, key);
          break;
        }
        throw new SchemaConversionError(path, `${JSON.stringify(key)} is not allowed inside a value validation (anyOf/allOf/oneOf/not)`);
    }
  }
  return ordered(out) as Json;
}

function validationRules(value: unknown, path: string): ValidationRule[] {
  if (!Array.isArray(value)) throw new SchemaConversionError(path, 'x-kubernetes-validations must be a list');
  return value.map((r, i) => {
    const rule = asObject(r, `${path}<x-kubernetes-validations[${i}]>`);
    for (const key of Object.keys(rule)) {
      if (!RULE_KEYS.has(key)) throw new SchemaConversionError(path, `unknown key ${JSON.stringify(key)} in validation rule ${i}`);
    }
    if (typeof rule.rule !== 'string' || rule.rule.trim() === '') throw new SchemaConversionError(path, `validation rule ${i} has no CEL expression`);
    if (rule.reason !== undefined && !RULE_REASONS.has(rule.reason as string)) {
      throw new SchemaConversionError(path, `validation rule ${i} has an unknown reason ${JSON.stringify(rule.reason)}`);
    }
    const out: ValidationRule = { rule: rule.rule };
    for (const key of ['message', 'messageExpression', 'reason', 'fieldPath'] as const) {
      const v = rule[key];
      if (v === undefined) continue;
      if (typeof v !== 'string') throw new SchemaConversionError(path, `validation rule ${i}: ${key} must be a string`);
      (out as Record<string, unknown>)[key] = v;
    }
    if (rule.optionalOldSelf !== undefined) out.optionalOldSelf = rule.optionalOldSelf === true;
    return out;
  });
}

/** Structural rules that span keywords. */
function number(value: unknown, path: string, key: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new SchemaConversionError(path, `${key} must be a number`);
  return value;
}

function asObject(value: unknown, path: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new SchemaConversionError(path, 'expected a schema object');
  return value as Json;
}

/** Copies keys in KEY_ORDER, recursing into nested schemas. */
function ordered(node: Json): JSONSchemaProps {
  const out: Json = {};
  for (const key of KEY_ORDER) {
    const value = node[key];
    if (value === undefined) continue;
    if (key === 'items' || key === 'not' || (key === 'additionalProperties' && typeof value === 'object')) out[key] = ordered(value as Json);
    else if (key === 'properties') out[key] = Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, ordered(v as Json)]));
    else if (key === 'anyOf' || key === 'allOf' || key === 'oneOf') out[key] = (value as Json[]).map(ordered);
    else out[key] = value;
  }
  return out as JSONSchemaProps;
}
