/**
 * The simulator's accounts: each bearer token belongs to one account, and each account is
 * `active` or `suspended` (for non-payment, say). In memory only: a restarted simulator starts
 * with every account active.
 *
 * Guarantees: a token maps to exactly one account (`accountFor` compares in constant time); the
 * default account (`DEFAULT_ACCOUNT`) holds the simulator's `token`; state changes are
 * synchronous, so a request sees either the old state or the new one, never half of it.
 * @module
 */
import { timingSafeEqual } from 'node:crypto';

export const DEFAULT_ACCOUNT = 'default';
export type AccountState = 'active' | 'suspended';
export const ACCOUNT_STATES: readonly AccountState[] = ['active', 'suspended'];
/** The reason given to a suspension when none is. */
export const DEFAULT_SUSPENSION_REASON = 'NonPayment';

export interface Account {
  id: string;
  state: AccountState;
  /** CamelCase; only while suspended. */
  reason?: string;
  /** Only while suspended. */
  message?: string;
  since: string;
}

export interface AccountConfig {
  id: string;
  token: string;
}

export class AccountValidationError extends Error {
  override readonly name = 'AccountValidationError';
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

const ACCOUNT_ID = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const REASON = /^[A-Z][A-Za-z0-9]{0,63}$/;

export class Accounts {
  readonly #byId = new Map<string, Account>();
  readonly #tokens: { id: string; token: Buffer }[] = [];
  readonly #now: () => number;

  constructor(accounts: AccountConfig[], now: () => number = Date.now) {
    this.#now = now;
    for (const { id, token } of accounts) {
      if (!ACCOUNT_ID.test(id)) throw new AccountValidationError('accounts', `account id "${id}" must be lower-case letters, digits and dashes`);
      if (!token) throw new AccountValidationError('accounts', `account ${id} has an empty token`);
      if (this.#byId.has(id)) throw new AccountValidationError('accounts', `account ${id} is given twice`);
      if (this.#tokens.some((t) => t.token.equals(Buffer.from(token)))) throw new AccountValidationError('accounts', `account ${id} reuses another account's token`);
      this.#byId.set(id, this.#active(id));
      this.#tokens.push({ id, token: Buffer.from(token) });
    }
  }

  #active(id: string): Account {
    return { id, state: 'active', since: new Date(this.#now()).toISOString() };
  }

  /** The account a bearer token belongs to, or undefined. Every token is compared (no early exit). */
  accountFor(given: string): string | undefined {
    const candidate = Buffer.from(given);
    let found: string | undefined;
    for (const { id, token } of this.#tokens) {
      if (candidate.length === token.length && timingSafeEqual(candidate, token)) found = id;
    }
    return found;
  }

  get(id: string): Account | undefined {
    const account = this.#byId.get(id);
    return account && structuredClone(account);
  }

  list(): Account[] {
    return [...this.#byId.values()].map((a) => structuredClone(a));
  }

  isSuspended(id: string): boolean {
    return this.#byId.get(id)?.state === 'suspended';
  }

  /** Sets an account's state; undefined when there is no such account. Throws `AccountValidationError` on bad input. */
  set(id: string, change: { state: unknown; reason?: unknown; message?: unknown }): Account | undefined {
    const current = this.#byId.get(id);
    if (!current) return undefined;
    if (!ACCOUNT_STATES.includes(change.state as AccountState)) throw new AccountValidationError('state', `state must be one of ${ACCOUNT_STATES.join(', ')}`);
    if (change.reason !== undefined && (typeof change.reason !== 'string' || !REASON.test(change.reason))) {
      throw new AccountValidationError('reason', 'reason must be CamelCase (letters and digits, starting with a capital), at most 64 characters');
    }
    if (change.message !== undefined && (typeof change.message !== 'string' || change.message.length > 1024)) {
      throw new AccountValidationError('message', 'message must be a string of at most 1024 characters');
    }
    const state = change.state as AccountState;
    let next: Account;
    if (state === 'active') next = current.state === 'active' ? current : this.#active(id);
    else {
      next = {
        id,
        state,
        reason: (change.reason as string | undefined) ?? DEFAULT_SUSPENSION_REASON,
        ...(change.message === undefined ? {} : { message: change.message as string }),
        since: current.state === 'suspended' ? current.since : new Date(this.#now()).toISOString(),
      };
    }
    this.#byId.set(id, next);
    return structuredClone(next);
  }

  /** Every account back to active. */
  resumeAll(): void {
    for (const id of this.#byId.keys()) this.set(id, { state: 'active' });
  }
}
