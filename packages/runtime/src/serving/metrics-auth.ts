/**
 * Who may read the metrics server: its requests checked by the API server, as controller-runtime's
 * `filters.WithAuthenticationAndAuthorization` (and kube-rbac-proxy before it) does.
 *
 * Guarantees:
 * - A request is allowed only when its `Authorization: Bearer <token>` is authenticated by a
 *   TokenReview (`POST /apis/authentication.k8s.io/v1/tokenreviews`) and the user the review
 *   names (username, groups, UID, extra) is allowed `get` on the request's path by a
 *   SubjectAccessReview for a non-resource URL (`nonResourceAttributes: { path, verb: 'get' }`).
 * - No `Authorization` header, one that is not `Bearer <token>`, or a token the review does not
 *   authenticate: 401. Authenticated but not allowed (denied, or no authorizer had an opinion):
 *   403. A review that did not answer (the API server unreachable, a 5xx, a refusal such as the
 *   operator's own missing RBAC, an answer that is not a review, no answer within
 *   `reviewTimeoutMs`), or a new key over the limits below: 503. An error never allows (fail
 *   closed); the error is logged, the request is not.
 * - Outcomes are cached, keyed by the SHA-256 of the token and the path: allowed for `allowTtlMs`
 *   (60 s), 401 and 403 for `denyTtlMs` (30 s), timed on the injected Clock's monotonic time; 503s
 *   are not cached. So a Prometheus scrape every 15 s costs one TokenReview and one
 *   SubjectAccessReview a minute. Concurrent requests with the same key share one pair of reviews.
 *   Allowed and refused outcomes are kept apart, each at most `maxEntries` (1,024; the least
 *   recently used goes first): a flood of bad tokens cannot push out a scraper's allowed entry.
 * - An allowed outcome past its TTL is never served: the key is reviewed again before it is
 *   allowed again. But it stays known as "allowed before" (until refused or pushed out), and its
 *   re-check is exempt from both limits below: junk tokens cannot starve a scraper whose entry
 *   expires. Such re-checks are bounded by the allowed keys (`maxEntries`), one at a time each.
 * - Any other key (never allowed, or refused before) is a new key and costs the operator a
 *   TokenReview made under its own identity, sharing its API server priority and fairness with
 *   the reconcilers. Its check is answered 503 without a review when more than `maxInFlight` (64)
 *   new keys are being checked at once, or when the token bucket of new reviews is empty: bursts
 *   of `newReviewsBurst` (10), refilled at `newReviewsPerSecond` (1 a second) on the Clock's
 *   monotonic time. So a flood of random tokens costs at most 10 TokenReviews at once and 1 a
 *   second after, at most 60 a minute; it logs one warning each time the bucket runs dry.
 * - The token itself is never logged, never kept (only its hash, in memory), never put in an
 *   answer or an error; it leaves the process only inside the TokenReview.
 *
 * Caveats:
 * - A revoked token, a deleted binding or a removed rule keeps passing until its cached outcome
 *   expires (at most `allowTtlMs`); a new binding takes up to `denyTtlMs` to let a scraper in.
 * - HEAD is checked as `get` (it is a GET without the body). The path is the one the server
 *   routes on (URL-normalised, without the query); RBAC's `nonResourceURLs` match it exactly, or
 *   by a trailing `*`.
 * - This is authentication over plain HTTP: the token crosses the network in clear. TLS is not
 *   built; see ADR 0041.
 * - The reviews are not retried: the next scrape tries again.
 * - During a flood, a scraper the authorizer has not allowed before gets 503 until the flood
 *   stops: after the operator starts (the cache is empty), with a new token (a rotated
 *   ServiceAccount token is a new key), on a new path, or once its entry was pushed out or
 *   refused. A scraper already allowed keeps being checked, and served, as usual.
 * @module
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock/index.ts';
import { systemClock } from '../clock/index.ts';
import { describeError } from '../logging/index.ts';
import { TokenBucket } from '../rate-limit/index.ts';

/** What the authorizer needs of a client: `KubeClient` has it (its `request`). */
export interface ReviewClient {
  request<R = unknown>(method: string, path: string, opts: { body?: unknown; signal?: AbortSignal }): Promise<R>;
}

/** What is asked: the request's `Authorization` header (as sent) and the path it reads. */
export interface AuthorizationRequest {
  authorization: string | undefined;
  /** The URL path without the query, e.g. `/metrics`. */
  path: string;
}

/** The answer: allowed (the user named), or the status code to refuse with and why. */
export type AuthorizationVerdict =
  | { allowed: true; user: string }
  | { allowed: false; code: 401 | 403 | 503; message: string };

/**
 * Decides whether a metrics request may be served. It should not throw; the metrics server
 * answers 503 when it does (never the endpoint).
 */
export type MetricsAuthorizer = (request: AuthorizationRequest) => Promise<AuthorizationVerdict>;

export interface KubernetesAuthorizerOptions {
  /** Creates the TokenReviews and SubjectAccessReviews: it needs `create` on both. */
  client: ReviewClient;
  clock?: Clock;
  /** Review failures (warn) and decisions (debug), never a token. */
  log?: Logger;
  /** How long an allowed outcome is reused (default 60 000 ms). */
  allowTtlMs?: number;
  /** How long a 401 or 403 is reused (default 30 000 ms). */
  denyTtlMs?: number;
  /** Allowed, and refused, outcomes kept at most (each; default 1,024). */
  maxEntries?: number;
  /** Each review's deadline (default 10 000 ms, controller-runtime's). */
  reviewTimeoutMs?: number;
  /**
   * New keys (never allowed before) being checked at once at most; more are answered 503 (default
   * 64). Re-checks of keys allowed before are not counted and never refused by it.
   */
  maxInFlight?: number;
  /** Checks of new keys started per second, on average (default 1; > 0, `Infinity`: no limit). */
  newReviewsPerSecond?: number;
  /** Checks of new keys started at once after a quiet spell (default 10; an integer ≥ 1). */
  newReviewsBurst?: number;
}

type Outcome = { allowed: true; user: string } | { allowed: false; code: 401 | 403; message: string };

interface TokenReview {
  status?: { authenticated?: boolean; user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> }; error?: string };
}
interface SubjectAccessReview {
  status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string };
}

const BEARER = /^bearer[ \t]+([^\s]+)$/i;
const UNAUTHENTICATED: Outcome = { allowed: false, code: 401, message: 'unauthorized: send a bearer token the API server authenticates (Authorization: Bearer <token>)' };

/** The bearer token of an `Authorization` header, or undefined when there is none. */
export function bearerToken(header: string | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  return BEARER.exec(header.trim())?.[1];
}

/** A bounded map whose least recently used entry goes first. */
class Lru<V> {
  readonly #max: number;
  readonly #map = new Map<string, V>();
  constructor(max: number) {
    this.#max = max;
  }
  get(key: string): V | undefined {
    const v = this.#map.get(key);
    if (v === undefined) return undefined;
    this.#map.delete(key);
    this.#map.set(key, v);
    return v;
  }
  set(key: string, v: V): void {
    this.#map.delete(key);
    this.#map.set(key, v);
    while (this.#map.size > this.#max) this.#map.delete(this.#map.keys().next().value!);
  }
  delete(key: string): void {
    this.#map.delete(key);
  }
  get size(): number {
    return this.#map.size;
  }
}

/**
 * A `MetricsAuthorizer` that asks the API server, as controller-runtime's
 * `filters.WithAuthenticationAndAuthorization`: the request's bearer token through a TokenReview,
 * then its user (with groups, UID, extra) through a SubjectAccessReview for `get` on the path as a
 * non-resource URL. 401 without a token the API server authenticates, 403 when the user is not
 * allowed, 503 when a review fails or does not answer within `reviewTimeoutMs` (never allowed on
 * an error). Outcomes are cached by the SHA-256 of the token and the path (allowed 60 s, refused
 * 30 s, on the Clock's monotonic time; failures not at all); the token is never logged or kept.
 * Keys never allowed before are checked at most 64 at once and 10 at once then 1 a second (503
 * beyond); a key allowed before is re-checked on expiry regardless, so junk cannot starve it.
 * The client needs `create` on `tokenreviews.authentication.k8s.io` and
 * `subjectaccessreviews.authorization.k8s.io`. Used by `createMetricsServer({ authorize })` and
 * `new Manager({ metricsAuth: 'kubernetes' })`.
 *
 * @example
 * const server = createMetricsServer({ address: ':8080', registry, authorize: kubernetesAuthorizer({ client }) });
 */
export function kubernetesAuthorizer(options: KubernetesAuthorizerOptions): MetricsAuthorizer {
  const clock = options.clock ?? systemClock;
  const allowTtlMs = options.allowTtlMs ?? 60_000;
  const denyTtlMs = options.denyTtlMs ?? 30_000;
  const timeoutMs = options.reviewTimeoutMs ?? 10_000;
  const maxInFlight = options.maxInFlight ?? 64;
  const maxEntries = options.maxEntries ?? 1024;
  for (const [name, v] of Object.entries({ allowTtlMs, denyTtlMs, timeoutMs, maxInFlight, maxEntries })) {
    if (!(typeof v === 'number' && v >= 0 && Number.isFinite(v))) throw new RangeError(`kubernetesAuthorizer: ${name} must be a finite number ≥ 0, not ${String(v)}`);
  }
  const newReviewsPerSecond = options.newReviewsPerSecond ?? 1;
  const newReviewsBurst = options.newReviewsBurst ?? 10;
  if (!(typeof newReviewsPerSecond === 'number' && newReviewsPerSecond > 0)) throw new RangeError(`kubernetesAuthorizer: newReviewsPerSecond must be > 0, not ${String(newReviewsPerSecond)}`);
  if (!(Number.isInteger(newReviewsBurst) && newReviewsBurst >= 1)) throw new RangeError(`kubernetesAuthorizer: newReviewsBurst must be an integer ≥ 1, not ${String(newReviewsBurst)}`);
  const newReviews = new TokenBucket({ qps: newReviewsPerSecond, burst: newReviewsBurst }, clock);
  let bucketDry = false;
  const allowed = new Lru<{ outcome: Outcome; until: number }>(maxEntries);
  const refused = new Lru<{ outcome: Outcome; until: number }>(maxEntries);
  const inFlight = new Map<string, Promise<Outcome>>();
  /** Of those, the checks of new keys: what `maxInFlight` counts. */
  let newInFlight = 0;
  const log = options.log;

  const review = async <R>(path: string, body: unknown): Promise<R> => {
    const deadline = new AbortController();
    const timer = clock.setTimer(timeoutMs, () => deadline.abort(new Error(`no answer within ${timeoutMs} ms`)));
    try {
      return await options.client.request<R>('POST', path, { body, signal: deadline.signal });
    } finally {
      timer.cancel();
    }
  };

  /** Both reviews; throws when either did not answer with a review. */
  const decide = async (token: string, path: string): Promise<Outcome> => {
    const tr = await review<TokenReview>('/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token },
    });
    const status = tr?.status;
    if (!status || typeof status !== 'object') throw new Error('the TokenReview came back without a status');
    if (status.authenticated !== true) return UNAUTHENTICATED;
    const user = status.user;
    if (!user || typeof user.username !== 'string' || user.username === '') throw new Error('the TokenReview authenticated no username');
    const sar = await review<SubjectAccessReview>('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        nonResourceAttributes: { path, verb: 'get' },
        user: user.username,
        ...(Array.isArray(user.groups) && user.groups.length ? { groups: user.groups } : {}),
        ...(typeof user.uid === 'string' && user.uid ? { uid: user.uid } : {}),
        ...(user.extra && typeof user.extra === 'object' && Object.keys(user.extra).length ? { extra: user.extra } : {}),
      },
    });
    const verdict = sar?.status?.allowed;
    if (typeof verdict !== 'boolean') throw new Error('the SubjectAccessReview came back without status.allowed');
    if (verdict) return { allowed: true, user: user.username };
    return { allowed: false, code: 403, message: `forbidden: user ${JSON.stringify(user.username)} may not get path ${JSON.stringify(path)}` };
  };

  return async ({ authorization, path }) => {
    const token = bearerToken(authorization);
    if (token === undefined) return UNAUTHENTICATED;
    const key = `${createHash('sha256').update(token).digest('hex')} ${path}`;
    const now = clock.monotonic();
    // An expired allowed entry is kept, never served: it marks the key as allowed before.
    const allowedBefore = allowed.get(key);
    if (allowedBefore && now < allowedBefore.until) {
      log?.debug({ path, allowed: true, cached: true }, 'metrics request checked');
      return allowedBefore.outcome;
    }
    const refusal = refused.get(key);
    if (refusal && now < refusal.until) {
      log?.debug({ path, allowed: false, cached: true }, 'metrics request checked');
      return refusal.outcome;
    }
    if (refusal) refused.delete(key);
    let pending = inFlight.get(key);
    if (!pending) {
      const isNew = !allowedBefore;
      if (isNew) {
        if (newInFlight >= maxInFlight) {
          log?.warn({ path, inFlight: newInFlight }, 'metrics request refused (503): too many credentials being checked at once');
          return { allowed: false, code: 503, message: 'service unavailable: too many requests being authenticated; try again' };
        }
        if (!newReviews.tryTake()) {
          if (!bucketDry) log?.warn({ path, newReviewsPerSecond, newReviewsBurst }, 'metrics requests refused (503): too many new credentials to check; further ones are logged at debug until one is checked');
          else log?.debug({ path }, 'metrics request refused (503): too many new credentials to check');
          bucketDry = true;
          return { allowed: false, code: 503, message: 'service unavailable: too many requests being authenticated; try again' };
        }
        bucketDry = false;
        newInFlight++;
      }
      pending = decide(token, path).then((outcome) => {
        const until = clock.monotonic() + (outcome.allowed ? allowTtlMs : denyTtlMs);
        if (outcome.allowed) allowed.set(key, { outcome, until });
        else {
          allowed.delete(key);
          refused.set(key, { outcome, until });
        }
        return outcome;
      });
      inFlight.set(key, pending);
      const settle = () => {
        inFlight.delete(key);
        if (isNew) newInFlight--;
      };
      void pending.then(settle, settle);
    }
    try {
      const outcome = await pending;
      log?.debug({ path, allowed: outcome.allowed, ...(outcome.allowed ? { user: outcome.user } : { code: outcome.code }), cached: false }, 'metrics request checked');
      return outcome;
    } catch (err) {
      // The token out of the error's text too, in case something on the way quoted the request.
      log?.warn({ path, error: describeError(err).split(token).join('[REDACTED]') }, 'metrics request refused (503): the API server did not review its credentials');
      return { allowed: false, code: 503, message: 'service unavailable: the API server could not check the credentials; try again' };
    }
  };
}
