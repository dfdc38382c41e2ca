/**
 * One pass of the late-create sweep over one vendor account (`late-creates.ts`, ADR 0037): which
 * of the given keys the vendor lists an instance for, and the deletion of each instance found.
 * The sweep decides which keys are due and what each outcome does to their schedules; this module
 * only talks to the vendor.
 *
 * Guarantees:
 * - **Bounded vendor load**: up to `BY_KEY_UP_TO` keys are looked up one by one by their exact
 *   idempotency key; more cost one listing of the account (every page), matched against all of them.
 * - **A failure delays only the keys it failed.** A failure about one instance or request
 *   (`ONE_KEY_FAILURES`) marks that key `failed` and the pass goes on; any other (no answer, a rate
 *   limit, the token, the account) would fail the account's other calls the same way, so it ends
 *   the pass (`ended`): keys not reached stay `notLooked`, and a key with instances still to delete
 *   waits for the next pass.
 * - **Only instances under the keys given are deleted**, each by its ID, through `deleteLate`.
 * - An item of the listing the client cannot read (outside the vendor contract) is never taken
 *   for "no instance": it fails the key it is listed under, or ends the pass when its key cannot
 *   be read; an unreadable item of another key is passed over.
 * - An aborted `signal` ends the pass at once and resolves `{ aborted: true }`; the looks may then
 *   be filled in part, and the caller applies none of them.
 * @module
 */
import type { Logger } from 'pino';
import type { VendorApi, VendorInstance } from './vendor-api.ts';
import { isVendorError } from './vendor/index.ts';
import type { LedgerEntry, LookOutcome } from './late-create-ledger.ts';

/** Up to this many keys of one account are looked up one by one; more cost one listing of the account. */
export const BY_KEY_UP_TO = 3;
/** Failures about one instance or request; any other (no answer, a rate limit, the token, the account) would fail the account's other calls too. */
const ONE_KEY_FAILURES: ReadonlySet<string> = new Set(['NotFound', 'Invalid', 'QuotaExhausted', 'InstanceThrottled']);

/** Whether a failure ends a pass over an account: it would fail the looks at the account's other keys the same way. */
function endsThePass(err: unknown): boolean {
  return !isVendorError(err) || refusedHere(err) || !ONE_KEY_FAILURES.has(err.kind);
}

/**
 * A call this process refused to send (`createClient`: the endpoint is not allowed, or not one the
 * client can use): every call to the account is refused the same way, for the life of the process
 * (its configuration decides).
 */
export function refusedHere(err: unknown): boolean {
  return isVendorError(err) && err.operation === 'createClient';
}

/** What one pass makes of one key: what the vendor answered (`found`, when it did), and the outcome. */
export interface KeyLook<T extends { entry: LedgerEntry }> {
  t: T;
  /** Not due yet, riding along in a listing. */
  early: boolean;
  found?: VendorInstance[];
  outcome: LookOutcome;
  err?: unknown;
}

export type PassResult = { aborted: true } | { aborted: false; ended?: { err: unknown } };

/**
 * Looks for instances under every key of `looks` (all of one account) and deletes each one found
 * with `deleteLate`; sets each look's `found`, `outcome` and `err` in place.
 */
export async function lookAtAccount<T extends { entry: LedgerEntry }>(
  vendor: VendorApi,
  looks: KeyLook<T>[],
  deleteLate: (entry: LedgerEntry, instance: VendorInstance) => Promise<void>,
  log: Logger,
  signal: AbortSignal,
): Promise<PassResult> {
  let ended: { err: unknown } | undefined;
  const fail = (look: KeyLook<T>, err: unknown): void => {
    look.outcome = 'failed';
    look.err = err;
    if (endsThePass(err)) ended ??= { err };
  };
  if (looks.length <= BY_KEY_UP_TO) {
    for (const look of looks) {
      if (ended) break;
      try {
        const instance = await vendor.findByIdempotencyKey(look.t.entry.uid, signal);
        look.found = instance ? [instance] : [];
      } catch (err) {
        if (signal.aborted) return { aborted: true };
        fail(look, err);
      }
    }
  } else {
    try {
      const { found, unreadable } = await findByListing(vendor, looks.map((l) => l.t.entry), log, signal);
      for (const look of looks) {
        const problem = unreadable.get(look.t.entry.uid);
        if (problem === undefined) look.found = found.get(look.t.entry.uid) ?? [];
        else {
          // Listed under this key but not readable: this key fails (looked at again, even past its
          // window); the others go on.
          look.outcome = 'failed';
          look.err = new Error(`vendor listInstanceStates: the instance listed under this key cannot be read (${problem})`);
        }
      }
    } catch (err) {
      if (signal.aborted) return { aborted: true };
      for (const look of looks) fail(look, err);
    }
  }
  for (const look of looks) {
    // Once the pass ended, a key with something to delete waits for the next pass (notLooked).
    if (!look.found || (ended && look.found.length)) continue;
    try {
      for (const instance of look.found) await deleteLate(look.t.entry, instance);
      look.outcome = 'looked';
    } catch (err) {
      if (signal.aborted) return { aborted: true };
      fail(look, err);
    }
  }
  return ended ? { aborted: false, ended } : { aborted: false };
}

/** The most pages one listing of an account reads (500 instances each), as the fleet watch. */
const MAX_LISTING_PAGES = 1000;

/**
 * One listing of the account, every page, matched against the keys: the instances found by key,
 * and the keys an item the client could not read is listed under (with why).
 */
async function findByListing(vendor: VendorApi, entries: LedgerEntry[], log: Logger, signal: AbortSignal): Promise<{ found: Map<string, VendorInstance[]>; unreadable: Map<string, string> }> {
  const keys = new Set(entries.map((e) => e.uid));
  const found = new Map<string, VendorInstance[]>();
  const unreadable = new Map<string, string>();
  const ids = new Set<string>();
  const tokens = new Set<string>();
  let pageToken: string | undefined;
  log.debug({ endpoint: entries[0]?.endpoint, keys: keys.size }, 'due keys matched against one listing of the account');
  // Bounded as the fleet watch bounds its listing: a vendor that repeats or cycles its page token
  // would otherwise hold this pass (and the sweep of every other account after it) for ever.
  for (let pages = 0; ; pages++) {
    if (pages >= MAX_LISTING_PAGES) throw new Error(`vendor listInstanceStates: more than ${MAX_LISTING_PAGES} pages; giving up this pass`);
    const page = await vendor.listInstanceStates({ pageSize: 500, ...(pageToken ? { pageToken } : {}) }, signal);
    const instances = page.items.map((i) => i.instance);
    // An item the client could not read: its instance, when that part was read, is cleaned like
    // any; one without a readable instance fails the key it is listed under ("not listed" would
    // read as "no late instance"), or every key when its key cannot be told; one of another key,
    // or of none, is passed over.
    for (const u of page.unreadable ?? []) {
      if (u.instance) instances.push(u.instance);
      else if (u.idempotencyKey === undefined) throw new Error(`vendor listInstanceStates: an item the client cannot read (${u.problem}) may be the late instance of any key; giving up this pass`);
      else if (u.idempotencyKey !== null && keys.has(u.idempotencyKey)) unreadable.set(u.idempotencyKey, u.problem);
    }
    for (const instance of instances) {
      const key = instance.idempotencyKey;
      if (key === null || !keys.has(key) || ids.has(instance.id)) continue;
      ids.add(instance.id);
      found.set(key, [...(found.get(key) ?? []), instance]);
    }
    pageToken = page.nextPageToken;
    if (!pageToken) return { found, unreadable };
    if (tokens.has(pageToken)) throw new Error('vendor listInstanceStates: the same page token came twice; giving up this pass');
    tokens.add(pageToken);
  }
}
