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
 * Guarantees: the object is changed in place, only by replacing a string with an equal string
 * (`===` holds for every value before and after), so no reader can observe it; frozen objects and
 * arrays are left as they are; strings longer than `MAX_INTERNED_LENGTH` (certificates, applied
 * configurations) are left alone, as they are rarely shared and costly to hash.
 * @module
 */

/** Longer strings are not shared: rarely equal between objects, and hashing them costs. */
export const MAX_INTERNED_LENGTH = 256;

function canonical(s: string): string {
  const holder: Record<string, 0> = { [s]: 0 };
  for (const key in holder) return key;
  return s;
}

function share(value: unknown): unknown {
  return typeof value === 'string' && value.length <= MAX_INTERNED_LENGTH ? canonical(value) : value;
}

/** Replaces, in place, every short string value inside `obj` with V8's canonical copy; returns `obj`. */
export function internStrings<T>(obj: T): T {
  visit(obj, 0);
  return obj;
}

function visit(node: unknown, depth: number): void {
  if (node === null || typeof node !== 'object' || depth > 64 || Object.isFrozen(node)) return;
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const v: unknown = node[i];
      if (typeof v === 'string') node[i] = share(v);
      else visit(v, depth + 1);
    }
    return;
  }
  const record = node as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const v = record[key];
    if (typeof v === 'string') record[key] = share(v);
    else visit(v, depth + 1);
  }
}
