/**
 * Whether an object is one an informer watches: its label and field selectors, evaluated here
 * for the objects this process writes (a write-through note must not put into a store an object
 * its watch would never deliver).
 *
 * Label selectors: the full syntax (`a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`,
 * `!a`, `a>1`, `a<1`, comma-separated), judged as apimachinery's `labels.Selector` judges them.
 * Field selectors: `metadata.name` and `metadata.namespace` with `=`, `==`, `!=`; any other field
 * cannot be judged here (`matches` answers `undefined`: the caller leaves that object to the
 * watch). A differential test holds every answer to the API server's
 * (`test/integration/runtime/selectors-differential.test.ts`). Hand-written (about 80 lines)
 * because no maintained package implements Kubernetes selectors for JavaScript; the grammar is
 * apimachinery's `labels.Parse`.
 * @module
 */
import type { KubeObject } from '../objects/index.ts';

type Requirement = (obj: KubeObject) => boolean | undefined;

/** A compiled selector pair; `matches` is true, false, or undefined when it cannot tell. */
export interface Selection {
  matches(obj: KubeObject): boolean | undefined;
}

export function compileSelection(labelSelector: string | undefined, fieldSelector: string | undefined): Selection {
  const requirements = [...parseLabelSelector(labelSelector ?? ''), ...parseFieldSelector(fieldSelector ?? '')];
  return {
    matches(obj) {
      let known = true;
      for (const r of requirements) {
        const m = r(obj);
        if (m === false) return false;
        if (m === undefined) known = false;
      }
      return known ? true : undefined;
    },
  };
}

/** Splits on commas outside parentheses. */
function terms(selector: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const c of selector) {
    if (c === '(') depth++;
    if (c === ')') depth--;
    if (c === ',' && depth === 0) {
      out.push(current.trim());
      current = '';
    } else current += c;
  }
  if (current.trim()) out.push(current.trim());
  return out.filter(Boolean);
}

/**
 * The object's value of a label, or undefined. Own properties only: `constructor` and `toString`
 * are valid label keys, and `in` or a plain lookup would find `Object.prototype`'s on every object.
 */
function label(o: KubeObject, key: string): string | undefined {
  const labels = o.metadata.labels;
  return labels !== undefined && Object.hasOwn(labels, key) ? labels[key] : undefined;
}

/** A base-10 signed 64-bit integer, as Go's `strconv.ParseInt(s, 10, 64)` reads it; else undefined. */
function int64(s: string): bigint | undefined {
  if (!/^[+-]?\d+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n >= -(2n ** 63n) && n < 2n ** 63n ? n : undefined;
}

export function parseLabelSelector(selector: string): Requirement[] {
  return terms(selector).map((term): Requirement => {
    let m = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(term);
    if (m) {
      const [, key, op, list] = m as unknown as [string, string, string, string];
      const values = new Set(list.split(',').map((v) => v.trim()));
      return op === 'in' ? (o) => values.has(label(o, key)!) : (o) => !values.has(label(o, key)!);
    }
    m = /^([^!=\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term);
    if (m) {
      const [, key, op, value] = m as unknown as [string, string, string, string];
      return op === '!=' ? (o) => label(o, key) !== value : (o) => label(o, key) === value;
    }
    m = /^([^!=<>\s]+)\s*([<>])\s*(\S+)$/.exec(term);
    if (m) {
      const [, key, op, bound] = m as unknown as [string, string, string, string];
      const limit = int64(bound);
      if (limit === undefined) throw new Error(`label selector term "${term}": the value of ${op} must be an integer`);
      return (o) => {
        const v = int64(label(o, key) ?? '');
        return v !== undefined && (op === '>' ? v > limit : v < limit);
      };
    }
    if (term.startsWith('!')) {
      const key = term.slice(1).trim();
      return (o) => label(o, key) === undefined;
    }
    if (/^\S+$/.test(term)) return (o) => label(o, term) !== undefined;
    throw new Error(`cannot parse label selector term "${term}"`);
  });
}

export function parseFieldSelector(selector: string): Requirement[] {
  return terms(selector).map((term): Requirement => {
    const m = /^([^!=\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term);
    const field = m?.[1];
    if (!m || (field !== 'metadata.name' && field !== 'metadata.namespace')) return () => undefined;
    const value = m[3]!;
    const get = (o: KubeObject) => (field === 'metadata.name' ? o.metadata.name : o.metadata.namespace) ?? '';
    return m[2] === '!=' ? (o) => get(o) !== value : (o) => get(o) === value;
  });
}
