/**
 * Call statistics of the simulator, for tests and benchmarks ("no vendor write calls", "no more
 * than a handful of 429s", "exactly one instance").
 *
 * @module
 */

export interface SimStats {
  /** Requests received per "METHOD route" (e.g. "POST /v1/instances", "GET /v1/instances/{id}"); "OTHER" for unknown paths. */
  requests: Record<string, number>;
  /** Answers sent per status code (lost responses and resets are not answers). */
  responses: Record<string, number>;
  /** POST, PATCH and DELETE requests received on /v1 (whatever their outcome), billable calls excepted. */
  writes: number;
  /** 429 answers sent (bursts and the rate limit). */
  rateLimited: number;
  /** 401 answers sent. */
  unauthorized: number;
  /** Instances actually created (a replayed Idempotency-Key does not count). */
  creates: number;
  /** Creates answered with an existing instance because of its Idempotency-Key. */
  createReplays: number;
  /**
   * Instances actually created per Idempotency-Key (creates without a key are not listed). A
   * key counted twice had two instances, one after the other or at once: exact, unlike sampling
   * `/admin/instances`, which misses an instance created and deleted between two samples.
   */
  createsByKey: Record<string, number>;
  /** Instances deleted through DELETE /v1/instances/{id} (not through /admin). */
  deletes: number;
  /** Instances that exist now. */
  liveInstances: number;
  /** Billable calls by outcome (`POST /v1/instances/{id}/calls` and admin `consume` alike). */
  metering: { accepted: number; throttled: number; refused: number; suspended: number };
  /** Faults that struck a request. */
  injected: { errors: number; outages: number; hangs: number; lostResponses: number; delayed: number };
  /** When counting started (ISO time): the simulator's start or the last stats reset. */
  since: string;
}

export type Counters = Omit<SimStats, 'liveInstances'>;

export function emptyCounters(): Counters {
  return {
    requests: {},
    responses: {},
    writes: 0,
    rateLimited: 0,
    unauthorized: 0,
    creates: 0,
    createReplays: 0,
    createsByKey: {},
    deletes: 0,
    metering: { accepted: 0, throttled: 0, refused: 0, suspended: 0 },
    injected: { errors: 0, outages: 0, hangs: 0, lostResponses: 0, delayed: 0 },
    since: new Date().toISOString(),
  };
}

export function bump(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}
