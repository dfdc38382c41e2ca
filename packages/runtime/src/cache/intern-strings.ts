/**
 * Shares equal string values between cached objects.
 *
 * Every object the watch delivers is a fresh `JSON.parse` result, so 2,000 cached objects hold
 * 2,000 copies of `"apps/v1"`, of the image name, of each condition reason and message, of every
 * defaulted field (`"/dev/termination-log"`, `"default-scheduler"`, …). Measured on the
 * Microservice benchmark's objects, sharing them takes the heap per cached object from ≈ 1,940
 * to ≈ 1,370 bytes (issue 17; ADR 0034).
 *
 * How: V8 keeps one canonical copy of every string used as a property key (its weak string
 * table). Using a value as a key once and reading the key back yields that copy; the duplicate
 * becomes garbage. The table holds strings only while something else does, so nothing leaks when
 * objects leave the cache. On other engines this is a harmless identity function in effect.
 *
 * A new version of a cached object is mostly the old one again (a Deployment's status moves,
 * its spec and metadata do not): given the version it replaces, a string equal to the one at the
 * same place in that version takes that (already shared) string, with no lookup in V8's table and
 * nothing allocated; only the strings that changed are looked up. Measured on a Deployment's
 * status updates in the interpreter the operator runs in (ADR 0034): ≈ 3× less time per update,
 * and none of the lookups' garbage (a lookup allocates a small object: the cold start's largest
 * source of young-generation garbage).
 *
 * Guarantees: the object is changed in place, only by replacing a string with an equal string
 * (`===` holds for every value before and after), so no reader can observe it; the previous
 * version is only read; frozen or sealed objects and arrays are left as they are; strings longer than
 * `MAX_INTERNED_LENGTH` (certificates, applied configurations) are left alone, as they are rarely
 * shared and costly to hash.
 * @module
 */

/** Longer strings are not shared: rarely equal between objects, and hashing them costs. */
export const MAX_INTERNED_LENGTH = 256;

/**
 * One holder for every lookup, left empty after each. It is in dictionary mode (a null-prototype
 * object), so a lookup adds no hidden class. A fresh `{ [s]: 0 }` per lookup took ≈ 4× the time
 * in the interpreter and was the cache's largest allocation site on a cold start (issue 17:
 * 19 MB of 277 MB sampled over a cold start of 500; 14 MB with this holder).
 */
const holder: Record<string, 0> = Object.create(null) as Record<string, 0>;

function canonical(s: string): string {
  holder[s] = 0;
  let key = s;
  for (const k in holder) key = k;
  delete holder[s];
  return key;
}

function share(value: unknown): unknown {
  return typeof value === 'string' && value.length <= MAX_INTERNED_LENGTH ? canonical(value) : value;
}

/**
 * Replaces, in place, every short string value inside `obj` with a shared copy: the equal string
 * at the same place in `previous` (an earlier version of the same object, whose strings were
 * shared before), else V8's canonical copy. Returns `obj`.
 */
export function internStrings<T>(obj: T, previous?: unknown): T {
  visit(obj, previous, 0, plainPrototypes());
  return obj;
}

/**
 * `for…in` walks an object twice as fast as `Object.keys` in the interpreter, but also yields
 * inherited enumerable properties: it is used only while the prototypes of plain objects and
 * arrays have none (always, unless some code added one to `Object.prototype`).
 */
function plainPrototypes(): boolean {
  for (const _ in {}) return false;
  for (const _ in []) return false;
  return true;
}

function visit(node: unknown, previous: unknown, depth: number, forIn: boolean): void {
  // Frozen and sealed objects are not extensible: they are left as they are.
  if (node === null || typeof node !== 'object' || depth > 64 || !Object.isExtensible(node)) return;
  const before = previous !== null && typeof previous === 'object' ? (previous as Record<string, unknown>) : undefined;
  if (Array.isArray(node)) {
    const list = Array.isArray(before) ? (before as unknown[]) : undefined;
    for (let i = 0; i < node.length; i++) {
      const v: unknown = node[i];
      const was = list?.[i];
      if (typeof v === 'string') node[i] = was === v ? was : share(v);
      else visit(v, was, depth + 1, forIn);
    }
    return;
  }
  const record = node as Record<string, unknown>;
  const old = before && !Array.isArray(before) ? before : undefined;
  if (forIn) {
    for (const key in record) {
      const v = record[key];
      const was = old?.[key];
      if (typeof v === 'string') record[key] = was === v ? was : share(v);
      else visit(v, was, depth + 1, forIn);
    }
    return;
  }
  for (const key of Object.keys(record)) {
    const v = record[key];
    const was = old?.[key];
    if (typeof v === 'string') record[key] = was === v ? was : share(v);
    else visit(v, was, depth + 1, forIn);
  }
}
