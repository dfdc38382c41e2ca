/**
 * `apiErrorFromResponse` reads what an API server — or anything between it and us (a proxy, an
 * aggregated API server, a load balancer's error page) — answered. A search over odd answers:
 * any status code of a failure, a body that is a `Status` with fields of any type, or anything
 * else JSON can hold, and any `Retry-After` text. Checked: it never throws; the reason is one of
 * the taxonomy's and follows the code as documented; the message is a string of 1 to 4,096
 * characters; causes are an array of causes with string fields; a wait the
 * server asked for is a finite number of milliseconds within the cap, never negative, and
 * comes only from a readable header (`parseRetryAfterMs`: seconds or an HTTP date) or an
 * integer `details.retryAfterSeconds`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ApiError, MAX_RETRY_AFTER_MS, apiErrorFromResponse, parseRetryAfter } from './errors.ts';

const REASONS = new Set(['NotFound', 'AlreadyExists', 'Conflict', 'Invalid', 'BadRequest', 'Gone', 'ResourceVersionTooLarge', 'TooManyRequests', 'Forbidden', 'Unauthorized', 'ServerError', 'Timeout', 'Network']);

const odd = fc.oneof(
  fc.constantFrom<unknown>(null, true, 0, -1, 1.5, Number.MAX_SAFE_INTEGER, 1e308, '', '5', 'x'.repeat(2_000), 'line one\nline two', [], {}, [1], { toString: 1 }),
  fc.string({ maxLength: 12 }),
  fc.integer(),
  fc.double(),
  fc.jsonValue({ maxDepth: 2 }),
);
const cause = fc.oneof({ weight: 3, arbitrary: fc.record({ field: odd, reason: fc.oneof(fc.constantFrom('ResourceVersionTooLarge', 'FieldValueInvalid', 'NamespaceTerminating'), odd), message: odd }, { requiredKeys: [] }) }, { weight: 1, arbitrary: odd });
const statusBody = fc.record({
  kind: fc.constantFrom<unknown>('Status', 'Status', 'Status', 'status', 7),
  status: fc.oneof(fc.constant('Failure'), odd),
  code: odd,
  reason: fc.oneof(fc.constantFrom('NotFound', 'AlreadyExists', 'Conflict', 'Invalid', 'Timeout', 'TooManyRequests'), odd),
  message: fc.oneof({ weight: 3, arbitrary: fc.string({ maxLength: 40 }) }, { weight: 2, arbitrary: odd }),
  details: fc.oneof(odd, fc.record({ causes: fc.oneof(fc.array(cause, { maxLength: 3 }), odd), retryAfterSeconds: fc.oneof(fc.integer({ min: -5, max: 100 }), odd), name: odd }, { requiredKeys: [] })),
}, { requiredKeys: ['kind'] });
const body = fc.oneof({ weight: 4, arbitrary: statusBody }, { weight: 1, arbitrary: odd }, { weight: 1, arbitrary: fc.constant(undefined) });
const digits = fc.stringMatching(/^[0-9]{1,400}$/);
const retryAfter = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  digits,
  fc.constantFrom('', ' ', '5', ' 5', '5 ', '-1', '+1', '1.5', '1e3', '0x10', 'Infinity', 'NaN', '99999999999999999999', 'Wed, 21 Oct 2015 07:28:00 GMT', 'Fri, 31 Dec 9999 23:59:59 GMT', 'soon', '2026-12-05'),
  fc.string({ maxLength: 20 }),
);
const code = fc.oneof(fc.constantFrom(300, 400, 401, 403, 404, 409, 410, 422, 429, 500, 503, 504), fc.integer({ min: 300, max: 599 }));

test('property: any failure answer becomes a well-formed ApiError, never an exception (fast-check)', () => {
  fc.assert(
    fc.property(code, body, retryAfter, (c, b, header) => {
      let err: ApiError;
      try {
        err = apiErrorFromResponse(c, b, header);
      } catch (e) {
        assert.fail(`threw ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
      }
      assert.ok(err instanceof ApiError);
      assert.ok(REASONS.has(err.reason), err.reason);
      assert.equal(err.code, c);
      if (c === 404) assert.equal(err.reason, 'NotFound');
      if (c === 429) assert.equal(err.reason, 'TooManyRequests');
      if (c === 403) assert.equal(err.reason, 'Forbidden');
      assert.equal(typeof err.message, 'string');
      assert.ok(err.message.length > 0 && err.message.length <= 4_096, `message of ${err.message.length} characters`);
      assert.ok(Array.isArray(err.causes));
      for (const k of err.causes) {
        assert.equal(typeof k, 'object');
        for (const f of ['field', 'reason', 'message'] as const) assert.ok(k[f] === undefined || typeof k[f] === 'string', `cause.${f}: ${typeof k[f]}`);
      }
      if (err.retryAfterMs !== undefined) {
        assert.ok(Number.isFinite(err.retryAfterMs) && err.retryAfterMs >= 0 && err.retryAfterMs <= MAX_RETRY_AFTER_MS, `retryAfterMs ${err.retryAfterMs}`);
      }
      // Predicates read the error without throwing.
      assert.doesNotThrow(() => String(err.transient));
    }),
    { numRuns: 5_000 },
  );
});

test('Retry-After: seconds (fractions allowed, negatives as 0), or an HTTP date counted from now; capped; other number forms and other text are no wait', () => {
  assert.equal(parseRetryAfter('5'), 5);
  assert.equal(parseRetryAfter('0'), 0);
  assert.equal(parseRetryAfter('-1'), 0);
  assert.equal(parseRetryAfter('1.5'), 2, 'rounded up to whole seconds');
  for (const bad of ['+1', '1e3', '0x10', ' ', 'Infinity', 'NaN', 'soon', '5 s', '2026-12-05', 'Dec 5 2026']) assert.equal(parseRetryAfter(bad), undefined, bad);
  assert.equal(parseRetryAfter(' 5 '), 5, 'surrounding whitespace is not part of the field value');
  assert.equal(parseRetryAfter('9'.repeat(400)), undefined, 'no safe number of ms: unreadable, never Infinity');
  assert.equal(parseRetryAfter('99999999'), MAX_RETRY_AFTER_MS / 1000, 'capped');
  assert.equal(parseRetryAfter(new Date(10_000).toUTCString(), 0), 10);
  assert.equal(parseRetryAfter('Fri, 31 Dec 9999 23:59:59 GMT', 0), MAX_RETRY_AFTER_MS / 1000);
  assert.equal(apiErrorFromResponse(429, { kind: 'Status' }, '1.5').retryAfterMs, 1_500, 'the error keeps milliseconds');
  assert.equal(apiErrorFromResponse(429, { kind: 'Status', details: { retryAfterSeconds: '5' } }).retryAfterMs, undefined, 'not a number: no wait');
  assert.equal(apiErrorFromResponse(429, { kind: 'Status', details: { retryAfterSeconds: -3 } }).retryAfterMs, undefined);
  assert.equal(apiErrorFromResponse(429, { kind: 'Status', details: { retryAfterSeconds: 1e12 } }).retryAfterMs, MAX_RETRY_AFTER_MS);
});
