/**
 * The ledger of released idempotency keys, as plain data: what the late-create sweep
 * (`late-creates.ts`) keeps in its ConfigMap, and when it looks at each key again. Pure: no I/O.
 *
 * An entry says "the finalizer of DigitalHumanProvider `namespace/name` (UID `uid`) was released
 * while a create sent to `endpoint` with idempotency key `uid` at `requestedAt` may still reach
 * the vendor; look for an instance with that key until `until`". It names the Secret that holds
 * the token, never the token. A `beforeCreate` entry is written before a provider's first create
 * instead, and says "look for it only if this provider disappears without its finalizer being
 * honoured"; it is dropped once the status records the instance and `BEFORE_CREATE_HOLD_MS` has
 * passed since the create request.
 *
 * Guarantees: `decodeLedger` never throws; a value it cannot read (not JSON, refused by the check
 * compiled from `LedgerEntrySchema` in `late-create-ledger-schema.ts`, a date `Date.parse` cannot
 * read, stored under another UID) is reported, not dropped silently, and leaves the other entries
 * intact. An entry holds the schema's fields only, read or written: any other is dropped. The look schedule starts `settleMs` after the
 * release and doubles up to `maxGapMs`; the last look is at `until`; a failed look is repeated
 * after the same gap, past `until` too (a vendor that does not answer is asked again, not given up).
 * After a pass over several keys (`afterPass`), each key's schedule follows its own outcome only:
 * a failure never delays, nor a success ever drops, another key.
 * @module
 */
import type { Static } from '@sinclair/typebox';
import { passes } from '../compiled-checks/index.ts';
import type { LedgerEntrySchema } from './late-create-ledger-schema.ts';
import { DEFAULT_CREDENTIALS_KEY } from './api/schema-free.ts';
import type { DigitalHumanProvider } from './api/schema-free.ts';

/** One entry (its fields are described in `late-create-ledger-schema.ts`). */
export type LedgerEntry = Static<typeof LedgerEntrySchema>;

/** ConfigMap `data`: one JSON value per UID. */
export type LedgerData = Record<string, string>;

/**
 * How long after a first create request its `beforeCreate` entry is kept although the provider's
 * status records the instance: the DELETE that races the finalizer (kubernetes#77988) arrived
 * before the finalizer, so before that request, and removes the object within its own request,
 * which kube-apiserver ends after 60 s at most.
 */
export const BEFORE_CREATE_HOLD_MS = 60_000;

/**
 * The entry for a provider whose create, sent to `endpoint` at `requestedAt`, may reach the vendor
 * after nothing in the cluster points at it: looked for until `windowMs` after the request.
 * With `beforeCreate`, the entry written before that create is sent (see the module header).
 */
export function entryFor(dhp: DigitalHumanProvider, endpoint: string, requestedAt: string, windowMs: number, options: { beforeCreate?: boolean } = {}): LedgerEntry {
  const ref = dhp.spec.credentials.secretRef;
  return {
    uid: dhp.metadata.uid!,
    namespace: dhp.metadata.namespace ?? '',
    name: dhp.metadata.name ?? '',
    endpoint,
    secret: { name: ref.name, key: ref.key ?? DEFAULT_CREDENTIALS_KEY },
    requestedAt,
    until: new Date(Date.parse(requestedAt) + windowMs).toISOString(),
    ...(options.beforeCreate ? { beforeCreate: true as const } : {}),
  };
}

/** The same entry as one written at the release (the provider is gone: look for its instance). */
export function released(entry: LedgerEntry): LedgerEntry {
  const { beforeCreate: _, ...rest } = entry;
  return rest;
}

/**
 * What to make of a `beforeCreate` entry given the provider found under its name (`undefined`:
 * none): `gone` when no provider has its UID (look for the instance, as for a released key);
 * `done` when its deletion honours our finalizer (the deletion looks by key itself), or its status
 * records an instance and `BEFORE_CREATE_HOLD_MS` has passed since the create request (a DELETE
 * that raced the finalizer arrived before that request and has ended), or the window is over;
 * else `keep`. `at` holds the entry's `until` and `requestedAt` and the present moment on one
 * timebase (the sweep uses monotonic time, so a step of the wall clock ends nothing early).
 */
export function beforeCreateVerdict(
  entry: LedgerEntry,
  found: DigitalHumanProvider | undefined,
  hasOurFinalizer: boolean,
  at: { now: number; until: number; requestedAt: number },
): 'gone' | 'done' | 'keep' {
  if (found?.metadata.uid !== entry.uid) return 'gone';
  if (found.metadata.deletionTimestamp !== undefined && hasOurFinalizer) return 'done';
  if (at.now >= at.until) return 'done';
  const recorded = found.status?.providerID !== undefined;
  return recorded && at.now - at.requestedAt >= BEFORE_CREATE_HOLD_MS ? 'done' : 'keep';
}

export function encodeEntry(entry: LedgerEntry): string {
  return JSON.stringify(known(entry));
}

export function decodeLedger(data: LedgerData | undefined): { entries: LedgerEntry[]; unreadable: string[] } {
  const entries: LedgerEntry[] = [];
  const unreadable: string[] = [];
  for (const [key, value] of Object.entries(data ?? {})) {
    const entry = decodeEntry(value);
    if (entry && entry.uid === key) entries.push(entry);
    else unreadable.push(key);
  }
  return { entries, unreadable };
}

/** An entry as the compiled check of `LedgerEntrySchema` reads it, with dates `Date.parse` reads; else `undefined`. */
function decodeEntry(value: string): LedgerEntry | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (!passes('lateCreateEntry', raw)) return undefined;
  const entry = raw as LedgerEntry;
  if (Number.isNaN(Date.parse(entry.until)) || Number.isNaN(Date.parse(entry.requestedAt))) return undefined;
  return known(entry);
}

/** The entry's own fields, nothing else (no token ever travels with it). */
function known(entry: LedgerEntry): LedgerEntry {
  const { uid, namespace, name, endpoint, secret, requestedAt, until, beforeCreate } = entry;
  return { uid, namespace, name, endpoint, secret: { name: secret.name, key: secret.key }, requestedAt, until, ...(beforeCreate ? { beforeCreate } : {}) };
}

/** When an entry is looked at next. */
export interface LookSchedule {
  dueAt: number;
  gapMs: number;
}

/** The first look: `settleMs` after the release (the deletion has just looked itself). */
export function firstLook(releasedAt: number, settleMs: number, untilAt: number): LookSchedule {
  return { dueAt: Math.min(untilAt, releasedAt + settleMs), gapMs: settleMs };
}

/**
 * After a look at `lookedAt`: the next one, or `undefined` when that look was at or after `until`
 * (the entry is done). The gap doubles up to `maxGapMs`; the last look is at `until`.
 */
export function nextLook(previous: LookSchedule, lookedAt: number, untilAt: number, maxGapMs: number): LookSchedule | undefined {
  if (lookedAt >= untilAt) return undefined;
  const gapMs = Math.min(maxGapMs, previous.gapMs * 2);
  return { dueAt: Math.min(untilAt, lookedAt + gapMs), gapMs };
}

/** After a look that failed (the vendor, the token): again after the same gap, capped, even past `until`. */
export function retryLook(previous: LookSchedule, lookedAt: number, maxGapMs: number): LookSchedule {
  const gapMs = Math.min(maxGapMs, previous.gapMs);
  return { dueAt: lookedAt + gapMs, gapMs };
}

/**
 * What one pass of the sweep made of a due key: `looked` (the look succeeded, and whatever it
 * found is deleted), `failed` (its look or a deletion failed), or `notLooked` (the pass stopped at
 * a failure before it got to this key).
 */
export type LookOutcome = 'looked' | 'failed' | 'notLooked';

export interface PassKey {
  uid: string;
  schedule: LookSchedule;
  untilAt: number;
  outcome: LookOutcome;
}

/**
 * The schedules after a pass that looked at `lookedAt`: a key looked at advances (`nextLook`), or
 * is done when that was its last look; a key whose look failed or did not happen is looked at
 * again after the same gap (`retryLook`) and is never done.
 */
export function afterPass(keys: readonly PassKey[], lookedAt: number, maxGapMs: number): { next: Map<string, LookSchedule>; done: string[] } {
  const next = new Map<string, LookSchedule>();
  const done: string[] = [];
  for (const { uid, schedule, untilAt, outcome } of keys) {
    const after = outcome === 'looked' ? nextLook(schedule, lookedAt, untilAt, maxGapMs) : retryLook(schedule, lookedAt, maxGapMs);
    if (after) next.set(uid, after);
    else done.push(uid);
  }
  return { next, done };
}
