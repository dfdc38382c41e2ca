/**
 * Checks of one converted schema node that `toStructuralSchema` runs after converting it: the
 * rules that make a node structural (a type, list and map types where they apply, declared
 * required properties), patterns RE2 can run, and numeric bounds a value of the node's own type
 * can meet. Each throws a `SchemaConversionError` naming the path; `checkStructure` also marks a
 * type-less node as keeping unknown fields (`Type.Unknown()`).
 * @module
 */
import { numberFitsFormat } from './default-check.ts';
import { SchemaConversionError } from './schema-conversion-error.ts';

type Json = Record<string, unknown>;

/**
 * A bound or `multipleOf` that is not a value of its node's own type (`minimum: 0.5` on an integer,
 * `maximum: 2^40` on an int32) makes kube-apiserver refuse every value of the field ("Minimum
 * boundary value must be of type integer"), though it accepts the CRD. Checked with the formats
 * its object validation keeps (int32/int64, float/double; others it drops).
 */
export function checkNumericBounds(out: Json, path: string): void {
  if (out.type !== 'integer' && out.type !== 'number') return;
  const kept = out.type === 'integer' ? ['int32', 'int64'] : ['float', 'double'];
  const format = typeof out.format === 'string' && kept.includes(out.format) ? out.format : undefined;
  for (const key of ['minimum', 'maximum', 'multipleOf'] as const) {
    const bound = out[key];
    if (typeof bound === 'number' && !numberFitsFormat(bound, out.type, format)) {
      throw new SchemaConversionError(path, `${key} ${bound} is not a valid ${out.type}${format ? ` (${format})` : ''}: kube-apiserver would refuse every value of this field`);
    }
  }
}

export function checkStructure(out: Json, path: string): void {
  const hasType = out.type !== undefined;
  if (!hasType && out['x-kubernetes-int-or-string'] !== true) {
    if (Object.keys(out).some((k) => !['description', 'title', 'nullable', 'x-kubernetes-validations', 'x-kubernetes-preserve-unknown-fields', 'default', 'example'].includes(k))) {
      throw new SchemaConversionError(path, 'a node with value constraints needs a type');
    }
    // Type.Unknown() / Type.Any(): keep whatever is stored.
    out['x-kubernetes-preserve-unknown-fields'] = true;
  }
  if (out.type === 'array' && out.items === undefined) throw new SchemaConversionError(path, 'an array needs items');
  if (out.type !== 'array' && (out['x-kubernetes-list-type'] !== undefined || out['x-kubernetes-list-map-keys'] !== undefined)) {
    throw new SchemaConversionError(path, 'x-kubernetes-list-type only applies to arrays');
  }
  if (out['x-kubernetes-list-type'] === 'map') {
    const keys = out['x-kubernetes-list-map-keys'] as string[] | undefined;
    const items = out.items as Json;
    if (!keys) throw new SchemaConversionError(path, 'x-kubernetes-list-type: map needs x-kubernetes-list-map-keys');
    if (items.type !== 'object') throw new SchemaConversionError(path, 'x-kubernetes-list-type: map needs object items');
    const required = new Set((items.required as string[] | undefined) ?? []);
    const properties = (items.properties as Record<string, Json> | undefined) ?? {};
    for (const key of keys) {
      const property = properties[key];
      if (!property) throw new SchemaConversionError(path, `list map key ${JSON.stringify(key)} is not a property of the items`);
      if (!required.has(key) && property.default === undefined) {
        throw new SchemaConversionError(path, `list map key ${JSON.stringify(key)} must be required or have a default`);
      }
    }
  } else if (out['x-kubernetes-list-map-keys'] !== undefined) {
    throw new SchemaConversionError(path, 'x-kubernetes-list-map-keys needs x-kubernetes-list-type: map');
  }
  if (out.type !== 'object' && out['x-kubernetes-map-type'] !== undefined) {
    throw new SchemaConversionError(path, 'x-kubernetes-map-type only applies to objects');
  }
  if (out.required !== undefined) {
    const properties = (out.properties as Json | undefined) ?? {};
    for (const name of out.required as string[]) {
      if (!Object.hasOwn(properties, name) && out['x-kubernetes-preserve-unknown-fields'] !== true) {
        throw new SchemaConversionError(path, `required property ${JSON.stringify(name)} is not declared`);
      }
    }
  }
  if (out['x-kubernetes-int-or-string'] === true && out.type !== undefined) {
    throw new SchemaConversionError(path, 'x-kubernetes-int-or-string excludes a type');
  }
}

export function checkPattern(pattern: string, path: string): void {
  try {
    new RegExp(pattern);
  } catch (error) {
    throw new SchemaConversionError(path, `invalid pattern ${JSON.stringify(pattern)}: ${(error as Error).message}`);
  }
  // Go's RE2 (used by the API server) has no lookaround and no backreferences.
  if (/\(\?[=!<]|\\[1-9]/.test(pattern)) throw new SchemaConversionError(path, `pattern ${JSON.stringify(pattern)} uses lookaround or backreferences, which RE2 lacks`);
}
