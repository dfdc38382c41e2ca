/**
 * VendorRecovery against a reference model, with random interleavings of vendor outcomes on two
 * endpoints, keys blocking, moving and settling, and time passing. The model is the module's
 * contract, not its code:
 * - an endpoint is down after `downAfter` unanswered calls in a row (429s and aborted calls say
 *   nothing); the first answer after that brings it back up;
 * - coming back up wakes exactly the keys blocked on that endpoint then, each once, in the order
 *   they were blocked, and nothing else;
 * - any other wake is a probe: of the oldest key blocked on an endpoint that is down, at least
 *   `probeIntervalMs` after the previous probe of that outage, and never later than
 *   `probeIntervalMs` after the endpoint was last seen down with keys waiting and no probe;
 * - `stats()` agrees with the model; after `stop` nothing is woken and no timer is left.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FakeClock } from '@converge/runtime';
import { VendorRecovery } from './vendor-recovery.ts';

const ENDPOINTS = ['https://a.vendor.example', 'https://b.vendor.example'] as const;
const KEYS = ['ns/p0', 'ns/p1', 'ns/p2', 'ns/p3', 'ns/p4'] as const;
const OUTCOMES = ['ok', 'NotFound', 'Unauthorized', 'Server', 'Timeout', 'Network', 'RateLimited', 'Aborted'] as const;
const NO_ANSWER = new Set(['Server', 'Timeout', 'Network']);
const NO_NEWS = new Set(['RateLimited', 'Aborted']);

type Command =
  | { kind: 'observe'; endpoint: number; outcome: (typeof OUTCOMES)[number] }
  | { kind: 'blocked'; endpoint: number; key: number }
  | { kind: 'settled'; key: number }
  | { kind: 'advance'; ms: number };

const command: fc.Arbitrary<Command> = fc.oneof(
  // Unanswered calls weigh more, so outages happen often.
  { arbitrary: fc.record({ kind: fc.constant('observe' as const), endpoint: fc.nat(1), outcome: fc.constantFrom(...OUTCOMES, 'Network', 'Server', 'Timeout') }), weight: 6 },
  { arbitrary: fc.record({ kind: fc.constant('blocked' as const), endpoint: fc.nat(1), key: fc.nat(KEYS.length - 1) }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('settled' as const), key: fc.nat(KEYS.length - 1) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 4_000 }) }), weight: 3 },
);

interface ModelEndpoint {
  unanswered: number;
  down: boolean;
  blocked: string[];
  /** Time of the last probe of this outage, if any. */
  lastProbeAt: number | undefined;
  /** Since when the endpoint has been down with keys waiting and no probe since. */
  waitingSince: number | undefined;
}

test('wakes match the reference model: each blocked key once per recovery, probes in turn and in time', async () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 3 }),
      fc.constantFrom(0, 1_000, 2_500),
      fc.array(command, { minLength: 1, maxLength: 80 }),
      (downAfter, probeIntervalMs, commands) => {
        const clock = new FakeClock(0);
        const recovery = new VendorRecovery({ clock, downAfter, probeIntervalMs });
        const woken: { key: string; at: number }[] = [];
        recovery.onWake((key) => woken.push({ key, at: clock.monotonic() }));
        const stop = new AbortController();
        void recovery.start(stop.signal);

        const model = new Map<string, ModelEndpoint>(
          ENDPOINTS.map((e) => [e, { unanswered: 0, down: false, blocked: [], lastProbeAt: undefined, waitingSince: undefined }]),
        );
        const endpointOf = (key: string): string | undefined => ENDPOINTS.find((e) => model.get(e)!.blocked.includes(key));
        const unblock = (key: string): void => {
          for (const m of model.values()) m.blocked = m.blocked.filter((k) => k !== key);
        };
        /** Starts or ends an endpoint's wait for a probe as its state changes. */
        const track = (m: ModelEndpoint): void => {
          const waiting = m.down && m.blocked.length > 0 && probeIntervalMs > 0;
          if (!waiting) m.waitingSince = undefined;
          else m.waitingSince ??= clock.monotonic();
        };
        /** Takes the wakes since `from` as probes: each must be the oldest key of a down endpoint, in time. */
        const probes = (from: number): void => {
          for (const w of woken.slice(from)) {
            const endpoint = endpointOf(w.key);
            assert.ok(endpoint !== undefined, `${w.key} woken at ${w.at} ms while not blocked`);
            const m = model.get(endpoint)!;
            assert.ok(m.down, `${w.key} probed at ${w.at} ms while ${endpoint} is up`);
            assert.equal(w.key, m.blocked[0], `probe at ${w.at} ms took ${w.key}, not the oldest waiting key ${m.blocked[0]}`);
            assert.ok(probeIntervalMs > 0, 'probed with probes off');
            if (m.lastProbeAt !== undefined) {
              assert.ok(w.at - m.lastProbeAt >= probeIntervalMs, `probes of ${endpoint} at ${m.lastProbeAt} and ${w.at} ms, interval ${probeIntervalMs}`);
            }
            m.lastProbeAt = w.at;
            m.blocked.shift();
            m.waitingSince = undefined;
            track(m);
          }
        };

        for (const c of commands) {
          const before = woken.length;
          if (c.kind === 'observe') {
            const endpoint = ENDPOINTS[c.endpoint]!;
            const m = model.get(endpoint)!;
            recovery.observe(endpoint, { outcome: c.outcome });
            if (NO_NEWS.has(c.outcome)) {
              assert.equal(woken.length, before, `${c.outcome} woke someone`);
            } else if (NO_ANSWER.has(c.outcome)) {
              assert.equal(woken.length, before, 'an unanswered call woke someone');
              m.unanswered++;
              if (m.unanswered >= downAfter) m.down = true;
            } else {
              const expected = m.down ? [...m.blocked] : [];
              assert.deepEqual(woken.slice(before).map((w) => w.key), expected, `${endpoint} answered (${c.outcome}) after being ${m.down ? 'down' : 'up'}`);
              if (m.down) m.blocked = [];
              m.down = false;
              m.unanswered = 0;
              m.lastProbeAt = undefined;
            }
            track(m);
          } else if (c.kind === 'blocked') {
            const key = KEYS[c.key]!;
            const endpoint = ENDPOINTS[c.endpoint]!;
            recovery.blocked(endpoint, key);
            if (endpointOf(key) !== endpoint) {
              unblock(key);
              model.get(endpoint)!.blocked.push(key);
            }
            assert.equal(woken.length, before, 'blocking woke someone');
            for (const m of model.values()) track(m);
          } else if (c.kind === 'settled') {
            recovery.settled(KEYS[c.key]!);
            unblock(KEYS[c.key]!);
            assert.equal(woken.length, before, 'settling woke someone');
            for (const m of model.values()) track(m);
          } else {
            // Advance in steps no longer than the probe interval, so a missed probe shows.
            let left = c.ms;
            while (left > 0) {
              const step = Math.min(left, probeIntervalMs || left);
              const mark = woken.length;
              clock.advance(step);
              left -= step;
              probes(mark);
              for (const [endpoint, m] of model) {
                if (m.waitingSince === undefined) continue;
                assert.ok(
                  clock.monotonic() - m.waitingSince <= probeIntervalMs,
                  `${endpoint} down with ${m.blocked.join(', ')} waiting since ${m.waitingSince} ms and no probe by ${clock.monotonic()} ms`,
                );
              }
            }
          }
          const s = recovery.stats();
          assert.equal(s.blocked, [...model.values()].reduce((n, m) => n + m.blocked.length, 0), 'stats().blocked');
          assert.equal(s.downEndpoints, [...model.values()].filter((m) => m.down).length, 'stats().downEndpoints');
          assert.equal(s.woken, woken.length, 'stats().woken');
        }

        stop.abort();
        const after = woken.length;
        clock.advance(60_000);
        for (const e of ENDPOINTS) recovery.observe(e, { outcome: 'ok' });
        assert.equal(woken.length, after, 'woken after stop');
        assert.equal(clock.pendingTimers(), 0, 'a timer left after stop');
      },
    ),
    { numRuns: 1_000 },
  );
});
