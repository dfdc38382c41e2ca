/**
 * "Does what is in the cluster already contain what we want?" — the no-op check that keeps a
 * converged Microservice from being written again on every periodic pass.
 *
 * Rules (the seed's `contains`, made precise):
 * - Every field present in `desired` must be present and equal in `current`; fields only in
 *   `current` (defaults and allocations added by the API server: clusterIP, strategy,
 *   terminationMessagePath, probe timeouts …) are not differences — except inside what the
 *   operator owns outright (`owned-fields.ts`: the Service's selector and ports, the Deployment's
 *   selector and containers), where a key `desired` does not set is a
 *   difference unless it holds the value the API server gives it. A hand edit that only adds (a
 *   selector key, a probe's host, a container's command) is therefore a difference too.
 * - Lists compare by length and position, element by element with the same rule.
 * - Scalars compare by value *and* type: `8080` and `"8080"` differ (an int-or-string port is
 *   compared exactly as the API returns it).
 * - An empty map or list in `desired` also matches an absent field (the API server omits empty
 *   `omitempty` fields), and an empty one in `current` where `desired` sets nothing is no
 *   addition; `null` in `desired` matches absent or `null`; `undefined` in `desired` asks for
 *   nothing.
 * - Which fields are owned outright follows `desired`'s apiVersion and kind (`ownedFieldsOf`: a
 *   Deployment or Service as `renderDesiredState` renders it); a caller whose desired object
 *   does not carry them (the update body keeps the live object's) passes the rules itself.
 *
 * `containsDesired(c, d)` is true exactly when `findDifferences(c, d)` is empty.
 * All functions are pure and never modify their arguments.
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import { ANY_VALUE, ownedFieldsOf } from './owned-fields.ts';
import type { FieldRules } from './owned-fields.ts';

/** One place where `current` does not contain `desired`. `actual` is `undefined` when absent. */
export interface Difference {
  /** e.g. `spec.template.spec.containers[0].image`, `metadata.labels["app.kubernetes.io/name"]`. */
  readonly path: string;
  readonly expected: unknown;
  readonly actual: unknown;
}

/** True when every field in `desired` is present and equal in `current` (and nothing is added where `rules` close an object). */
export function containsDesired(current: unknown, desired: unknown, rules: FieldRules | undefined = ownedFieldsOf(desired)): boolean {
  if (rules?.same) current = rules.same(current, desired);
  if (desired === undefined) return true;
  if (desired === null) return current === null || current === undefined;
  if (Array.isArray(desired)) {
    if (current === undefined && desired.length === 0) return true;
    if (!Array.isArray(current) || current.length !== desired.length) return false;
    for (let i = 0; i < desired.length; i++) if (!containsDesired(current[i], desired[i], rules?.items)) return false;
    return true;
  }
  if (typeof desired === 'object') {
    const wanted = desired as Record<string, unknown>;
    // for…in with an own-property check: no array of entries per object compared (this runs on
    // every reconcile, over the whole desired Deployment).
    if (current === undefined) {
      for (const key in wanted) if (Object.hasOwn(wanted, key) && wanted[key] !== undefined) return false;
      return true;
    }
    if (!isPlainObject(current)) return false;
    for (const key in wanted) {
      if (!Object.hasOwn(wanted, key)) continue;
      if (!containsDesired(Object.hasOwn(current, key) ? current[key] : undefined, wanted[key], rules?.fields?.[key])) return false;
    }
    if (rules?.closed) {
      for (const key in current) {
        if (Object.hasOwn(current, key) && !isWanted(wanted, key) && !isAllowedAddition(rules.closed, key, current[key])) return false;
      }
    }
    return true;
  }
  return current === desired;
}

/** Whether `desired` sets `key`. */
function isWanted(wanted: Record<string, unknown>, key: string): boolean {
  return Object.hasOwn(wanted, key) && wanted[key] !== undefined;
}

/** Whether `value` under `key`, not set by the desired object, is no addition: empty, or what the API server gives the key. */
function isAllowedAddition(closed: Readonly<Record<string, unknown>>, key: string, value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value) && value.length === 0) return true;
  if (isPlainObject(value) && Object.keys(value).length === 0) return true;
  if (!Object.hasOwn(closed, key)) return false;
  return closed[key] === ANY_VALUE || isDeepStrictEqual(value, closed[key]);
}

/** Every place where `current` does not contain `desired`, in document order. */
export function findDifferences(current: unknown, desired: unknown, rules: FieldRules | undefined = ownedFieldsOf(desired)): Difference[] {
  const out: Difference[] = [];
  walk(current, desired, '', out, rules);
  return out;
}

/**
 * The differences as they may be shown to people (`converge explain`, the dashboard) and in logs:
 * no env value — a plain env value may be a password. A difference of an env var's `value` shows
 * neither side (`(value hidden)`; absent stays `undefined`); any other value that holds env vars
 * (an `env` list or one of its items, a whole container, the pod template) shows them with their
 * values hidden, names and `valueFrom` references kept.
 */
export function findDifferencesShown(current: unknown, desired: unknown, rules: FieldRules | undefined = ownedFieldsOf(desired)): Difference[] {
  return findDifferences(current, desired, rules).map(({ path, expected, actual }) => ({ path, expected: shownValue(path, expected), actual: shownValue(path, actual) }));
}

/** Human-readable differences, one per line: `<path>: want <desired|absent>, have <current|absent>` (env values hidden). */
export function describeDifferences(current: unknown, desired: unknown, rules: FieldRules | undefined = ownedFieldsOf(desired)): string[] {
  return findDifferencesShown(current, desired, rules).map(describe);
}

/**
 * The differences fit for a log line: at most `max` entries (`more` counts the rest), each at
 * most 200 characters, and no env value shown (`describeDifferences`).
 */
export function differencesForLog(current: unknown, desired: unknown, max = 10, rules: FieldRules | undefined = ownedFieldsOf(desired)): { differences: string[]; more: number } {
  const all = findDifferencesShown(current, desired, rules);
  const differences = all.slice(0, max).map((d) => {
    const text = [...describe(d)];
    return text.length > 200 ? `${text.slice(0, 199).join('')}…` : text.join('');
  });
  return { differences, more: Math.max(0, all.length - max) };
}

function describe(d: Difference): string {
  const where = d.path || '<root>';
  if (ENV_VALUE_PATH.test(where)) return `${where}: differs ${HIDDEN}`;
  if (Array.isArray(d.expected) && Array.isArray(d.actual)) {
    return `${where}: want ${count(d.expected.length)} ${show(d.expected)}, have ${count(d.actual.length)} ${show(d.actual)}`;
  }
  return `${where}: want ${d.expected === undefined ? 'absent' : show(d.expected)}, have ${d.actual === undefined ? 'absent' : show(d.actual)}`;
}

/** The path of an env var's value (which may be a secret). */
const ENV_VALUE_PATH = /(^|\.)env\[\d+\]\.value$/;
/** The path of an `env` list or one of its items. */
const ENV_LIST_OR_ITEM_PATH = /(^|\.)env(\[\d+\])?$/;
const HIDDEN = '(value hidden)';

function shownValue(path: string, value: unknown): unknown {
  if (value === undefined) return undefined;
  if (ENV_VALUE_PATH.test(path)) return HIDDEN;
  return envValuesHidden(value, ENV_LIST_OR_ITEM_PATH.test(path));
}

/** A copy of `value` in which every item of an `env` list (at any depth) has its `value` hidden. */
function envValuesHidden(value: unknown, inEnv: boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => envValuesHidden(v, inEnv));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[key] = inEnv && key === 'value' ? HIDDEN : envValuesHidden(v, !inEnv && key === 'env');
  return out;
}

function walk(current: unknown, desired: unknown, path: string, out: Difference[], rules: FieldRules | undefined): void {
  if (rules?.same) current = rules.same(current, desired);
  if (desired === undefined) return;
  if (desired === null) {
    if (current !== null && current !== undefined) out.push({ path, expected: null, actual: current });
    return;
  }
  if (Array.isArray(desired)) {
    if (current === undefined && desired.length === 0) return;
    if (!Array.isArray(current) || current.length !== desired.length) {
      out.push({ path, expected: desired, actual: current });
      return;
    }
    for (let i = 0; i < desired.length; i++) walk(current[i], desired[i], `${path}[${i}]`, out, rules?.items);
    return;
  }
  if (typeof desired === 'object') {
    if (current === undefined && Object.values(desired).every((v) => v === undefined)) return;
    if (!isPlainObject(current)) {
      out.push({ path, expected: desired, actual: current });
      return;
    }
    const wanted = desired as Record<string, unknown>;
    for (const [key, value] of Object.entries(wanted)) {
      walk(Object.hasOwn(current, key) ? current[key] : undefined, value, join(path, key), out, rules?.fields?.[key]);
    }
    if (rules?.closed) {
      for (const [key, value] of Object.entries(current)) {
        if (isWanted(wanted, key) || isAllowedAddition(rules.closed, key, value)) continue;
        const given = rules.closed[key];
        // What the write would leave there: nothing, or what the API server gives the key.
        out.push({ path: join(path, key), expected: Object.hasOwn(rules.closed, key) && given !== ANY_VALUE ? given : undefined, actual: value });
      }
    }
    return;
  }
  if (current !== desired) out.push({ path, expected: desired, actual: current });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function join(path: string, key: string): string {
  if (IDENTIFIER.test(key)) return path ? `${path}.${key}` : key;
  return `${path}[${JSON.stringify(key)}]`;
}

function count(n: number): string {
  return n === 1 ? '1 item' : `${n} items`;
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  // Cut by code points: a cut through a surrogate pair (an emoji) left half a character.
  const chars = [...text];
  return chars.length > 120 ? `${chars.slice(0, 117).join('')}...` : text;
}
