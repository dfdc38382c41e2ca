/**
 * Whether a `default` fits the structural schema node it sits on, as kube-apiserver checks it
 * when the CRD is created ("default: Invalid value: 3: in body should be a multiple of 2"), so
 * that `toStructuralSchema` can refuse it at definition time instead.
 *
 * Checked: type (and `nullable`, int-or-string, preserved unknown fields), `enum`, numeric bounds
 * and `multipleOf`, string lengths in characters and `pattern`, item counts, and for objects and
 * arrays every member against its own node: a required field the default leaves out must have a
 * default of its own, and a field the schema does not know would be pruned, which the API server
 * refuses too. Formats: the ones kube-apiserver validates are checked where the answer is certain
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

function numberProblem(node: Node, value: number, where: string): string | undefined {
  const { minimum, maximum, multipleOf } = node as { minimum?: number; maximum?: number; multipleOf?: number };
  if (minimum !== undefined && (node.exclusiveMinimum === true ? value <= minimum : value < minimum)) return `${where} (${value}) is below the minimum ${minimum}`;
  if (maximum !== undefined && (node.exclusiveMaximum === true ? value >= maximum : value > maximum)) return `${where} (${value}) is above the maximum ${maximum}`;
  if (multipleOf !== undefined && multipleOf > 0) {
    const ratio = value / multipleOf;
    if (Math.abs(ratio - Math.round(ratio)) > 1e-9) return `${where} (${value}) is not a multiple of ${multipleOf}`;
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
    if (!Object.hasOwn(value, name) && properties?.[name]?.default === undefined) return `${at}.${name} is required and the default leaves it out`;
  }
  return undefined;
}
