import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '@converge/runtime';
import { applyFailureMessage, tellsApplyFailure } from './apply-failure.ts';

const answer = (code: number, reason: ConstructorParameters<typeof ApiError>[0]['reason'], message = 'x') => new ApiError({ reason, code, message });

test('told in the status: refusals and failures retrying may outlive; not the cache being behind, a 429, a terminating namespace or no answer', () => {
  for (const e of [answer(403, 'Forbidden'), answer(401, 'Unauthorized'), answer(400, 'BadRequest'), answer(500, 'ServerError'), answer(504, 'Timeout')]) assert.equal(tellsApplyFailure(e), true, e.reason);
  for (const e of [answer(409, 'Conflict'), answer(409, 'AlreadyExists'), answer(404, 'NotFound'), answer(429, 'TooManyRequests'), answer(0, 'Network'), answer(0, 'Timeout'), new Error('x')]) assert.equal(tellsApplyFailure(e), false, String(e));
  assert.equal(tellsApplyFailure(answer(403, 'Forbidden', 'unable to create new content in namespace ns because it is being terminated')), false);
});

test('the message names the write and quotes the API server, cut at 1,000 characters', () => {
  const quota = answer(403, 'Forbidden', 'services "web" is forbidden: exceeded quota: q, requested: services=1, used: services=0, limited: services=0');
  assert.equal(applyFailureMessage(quota, 'Service', 'web', false, false), `could not create Service web: ${quota.message}; retried with backoff`);
  assert.match(applyFailureMessage(quota, 'Deployment', 'web', true, true), /^could not adopt \(update\) Deployment web: /);
  assert.ok(applyFailureMessage(answer(500, 'ServerError', 'y'.repeat(5_000)), 'Service', 'web', true, false).length < 1_100);
});
