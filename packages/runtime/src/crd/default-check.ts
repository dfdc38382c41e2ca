/**
 * Whether a `default` fits the structural schema node it sits on, as kube-apiserver checks it
 * when the CRD is created ("default: Invalid value: 3: in body should be a multiple of 2"), so
 * that `toStructuralSchema` can refuse it at definition time instead.
 *
 * Checked: type (and `nullable`, int-or-string, preserved unknown fields), `enum`, numeric bounds
 * and `multipleOf` as kube-openapi checks them (a value must fit its integer or float format; one
 * written as an integer is compared with int64 conversions of the bounds), string lengths in
 * characters and `pattern`, item counts, and for objects and arrays every member against its own
 * node: a default must list every required field (the API server validates a default as written
 * and applies no nested default to it, even where the required field has a default of its own),
 * and a field the schema does not know would be pruned, which the API server refuses too.
 * Formats: the ones kube-apiserver validates are checked where the answer is certain
 * (`date-time`, `date`, `uuid`, `ipv4`, `ipv6`, `cidr`, `mac`, `byte`) and only for plain
 * mistakes where its parser is lenient (`uri`, `email`, `hostname`, `duration`); others are
 * ignored, as it ignores them. Not checked: CEL rules and value validations (`anyOf`, `allOf`,
 * `oneOf`, `not`).
 * Pure; answers the first problem found, with its path inside the default, or `undefined`.
 * @module
 */

import { isIP } from 'node:net';

type Node = Record<string, unknown>;

export function defaultProblem(node: Node, value: unknown, at = ''): string | undefined {
  const where = at || 'the default';
  if (value === null) return node.nullable === true ? undefined : `${where} is null, and the field is not nullable`;
  if (node['x-kubernetes-preserve-unknown-fields'] === true && node.type === undefined) return undefined;
  if (node['x-kubernetes-int-or-string'] === true) {
    if (!(typeof value === 'string' || Number.isInteger(value))) return `${where} must be an integer or a string`;
  } else {
    const problem = typeProblem(node.type, value, where);
    if (problem) return problem;
  }
  if (Array.isArray(node.enum) && !node.enum.some((v) => JSON.stringify(v) === JSON.stringify(value))) return `${where} is not one of ${JSON.stringify(node.enum)}`;
  if (typeof value === 'number') return numberProblem(node, value, where);
  if (typeof value === 'string') return stringProblem(node, value, where);
  if (Array.isArray(value)) return arrayProblem(node, value, at);
  if (typeof value === 'object') return objectProblem(node, value as Node, at);
  return undefined;
}

function typeProblem(type: unknown, value: unknown, where: string): string | undefined {
  const ok =
    type === undefined ||
    (type === 'string' && typeof value === 'string') ||
    (type === 'boolean' && typeof value === 'boolean') ||
    (type === 'integer' && Number.isInteger(value)) ||
    (type === 'number' && typeof value === 'number' && Number.isFinite(value)) ||
    (type === 'array' && Array.isArray(value)) ||
    (type === 'object' && typeof value === 'object' && value !== null && !Array.isArray(value));
  return ok ? undefined : `${where} must be of type ${String(type)}, not ${JSON.stringify(value)}`;
}

// kube-openapi's numeric checks (validate/values.go, as kube-apiserver runs them on a default):
// every number, bound and `multipleOf` must fit the node's type and format ("must be of type
// integer"), and a value JSON writes as an integer is decoded as an int64, against which the
// bounds and `multipleOf` are converted to int64 first (truncated; -2^63 when out of range).
const INTEGER_RANGE: Record<string, readonly [bigint, bigint]> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
};

/**
 * Whether kube-apiserver takes `n` as a value of a node with this `type` and `format` (its
 * "must be of type integer (default format)" check, applied to values and to the bounds and
 * `multipleOf` alike): an integer node takes integers in its format's range (int64 unless
 * `int32`, `uint32` or `uint64`), a `float` number node takes what a float32 can hold.
 */
export function numberFitsFormat(n: number, type: unknown, format: unknown): boolean {
  if (type === 'integer') {
    if (!Number.isInteger(n)) return false;
    const [low, high] = typeof format === 'string' && Object.hasOwn(INTEGER_RANGE, format) ? INTEGER_RANGE[format]! : INTEGER_RANGE.int64!;
    const big = BigInt(n);
    return big >= low && big <= high;
  }
  if (type === 'number' && (format === 'float' || format === 'float32')) return Number.isFinite(Math.fround(n));
  return true;
}

/** Whether the API server decodes `n` (as JSON writes it) as an int64 rather than a float64. */
function decodesAsInteger(n: number): boolean {
  if (!Number.isInteger(n) || Math.abs(n) >= 1e21) return false;
  const big = BigInt(n);
  return big >= INTEGER_RANGE.int64![0] && big <= INTEGER_RANGE.int64![1];
}

/**
 * Go's `int64(f)` as kube-apiserver runs it (amd64): truncation, and the "integer indefinite"
 * -2^63 for a float outside int64's range.
 */
function goInt64(f: number): number {
  return f >= -(2 ** 63) && f < 2 ** 63 ? Math.trunc(f) : -(2 ** 63);
}

/** go-openapi's `IsFloat64AJSONInteger`, the test its float `multipleOf` check uses. */
function isJsonInteger(f: number): boolean {
  if (!Number.isFinite(f) || Math.abs(f) > Number.MAX_SAFE_INTEGER) return false;
  const g = Math.trunc(f);
  if (f === g) return true;
  return Math.abs(f - g) / Math.min(Math.abs(f) + Math.abs(g), Number.MAX_VALUE) < 1e-9;
}

function numberProblem(node: Node, value: number, where: string): string | undefined {
  const { type, format, minimum, maximum, multipleOf } = node as { type?: unknown; format?: unknown; minimum?: number; maximum?: number; multipleOf?: number };
  const kind = `${String(type)}${typeof format === 'string' && format !== '' ? ` (${format})` : ''}`;
  // An integer node takes only what decodes as an int64 (a float64 is "must be of type integer").
  if (!numberFitsFormat(value, type, format) || (type === 'integer' && !decodesAsInteger(value))) return `${where} (${value}) is out of range for ${kind}`;
  for (const [name, bound] of [['minimum', minimum], ['maximum', maximum], ['multipleOf', multipleOf]] as const) {
    if (bound !== undefined && !numberFitsFormat(bound, type, format)) return `${name} ${bound} is not a valid ${kind}, so the API server refuses every value, ${where} included`;
  }
  const integer = decodesAsInteger(value);
  const low = minimum === undefined ? undefined : integer ? goInt64(minimum) : minimum;
  const high = maximum === undefined ? undefined : integer ? goInt64(maximum) : maximum;
  if (low !== undefined && (node.exclusiveMinimum === true ? value <= low : value < low)) return `${where} (${value}) is below the minimum ${minimum}${low !== minimum ? ` (the API server checks an integer against ${low})` : ''}`;
  if (high !== undefined && (node.exclusiveMaximum === true ? value >= high : value > high)) return `${where} (${value}) is above the maximum ${maximum}${high !== maximum ? ` (the API server checks an integer against ${high})` : ''}`;
  if (multipleOf !== undefined) {
    const factor = integer ? goInt64(multipleOf) : multipleOf;
    const fits = factor > 0 && (integer ? value % factor === 0 : isJsonInteger(factor < 1 ? (1 / factor) * value : value / factor));
    if (!fits) return `${where} (${value}) is not a multiple of ${multipleOf}${integer && factor !== multipleOf ? ` (the API server checks an integer against ${factor})` : ''}`;
  }
  return undefined;
}

const FORMATS: Record<string, (v: string) => boolean> = {
  'date-time': (v) => /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(v) && !Number.isNaN(Date.parse(v.replace(' ', 'T'))),
  date: (v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(v)),
  uuid: (v) => /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/.test(v),
  ipv4: (v) => isIP(v) === 4,
  ipv6: (v) => isIP(v) === 6,
  cidr: (v) => {
    const [ip, bits, ...rest] = v.split('/');
    const family = isIP(ip ?? '');
    return rest.length === 0 && family !== 0 && /^\d+$/.test(bits ?? '') && Number(bits) <= (family === 4 ? 32 : 128);
  },
  mac: (v) => /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$/.test(v) || /^([0-9a-fA-F]{4}\.){2}[0-9a-fA-F]{4}$/.test(v),
  byte: (v) => /^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(v),
  uri: (v) => /^[A-Za-z][A-Za-z0-9+.-]*:/.test(v) || v.startsWith('/'),
  email: (v) => v.includes('@'),
  hostname: (v) => /^[A-Za-z0-9.-]{1,255}$/.test(v),
  duration: (v) => /\d/.test(v),
};

function stringProblem(node: Node, value: string, where: string): string | undefined {
  const { minLength, maxLength, pattern, format } = node as { minLength?: number; maxLength?: number; pattern?: string; format?: string };
  if (format !== undefined && FORMATS[format] && !FORMATS[format](value)) return `${where} is not a ${format}`;
  const length = [...value].length;
  if (minLength !== undefined && length < minLength) return `${where} is shorter than ${minLength} characters`;
  if (maxLength !== undefined && length > maxLength) return `${where} is longer than ${maxLength} characters`;
  if (pattern !== undefined && !new RegExp(pattern).test(value)) return `${where} does not match ${pattern}`;
  return undefined;
}

function arrayProblem(node: Node, value: unknown[], at: string): string | undefined {
  const { minItems, maxItems, items } = node as { minItems?: number; maxItems?: number; items?: Node };
  const where = at || 'the default';
  if (minItems !== undefined && value.length < minItems) return `${where} has fewer than ${minItems} items`;
  if (maxItems !== undefined && value.length > maxItems) return `${where} has more than ${maxItems} items`;
  if (items) for (const [i, item] of value.entries()) {
    const problem = defaultProblem(items, item, `${at}[${i}]`);
    if (problem) return problem;
  }
  return undefined;
}

function objectProblem(node: Node, value: Node, at: string): string | undefined {
  const properties = node.properties as Record<string, Node> | undefined;
  const additional = node.additionalProperties as Node | undefined;
  const { minProperties, maxProperties } = node as { minProperties?: number; maxProperties?: number };
  const where = at || 'the default';
  const keys = Object.keys(value);
  if (minProperties !== undefined && keys.length < minProperties) return `${where} has fewer than ${minProperties} fields`;
  if (maxProperties !== undefined && keys.length > maxProperties) return `${where} has more than ${maxProperties} fields`;
  for (const key of keys) {
    const sub = (properties && Object.hasOwn(properties, key) ? properties[key] : undefined) ?? additional;
    if (!sub) {
      if (node['x-kubernetes-preserve-unknown-fields'] === true) continue;
      return `${at}.${key} is not a field of the schema (the API server would prune it from the default, and refuses that)`;
    }
    const problem = defaultProblem(sub, value[key], `${at}.${key}`);
    if (problem) return problem;
  }
  for (const name of (node.required as string[] | undefined) ?? []) {
    if (!Object.hasOwn(value, name)) return `${at}.${name} is required and the default leaves it out`;
  }
  return undefined;
}
