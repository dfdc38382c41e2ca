import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiErrorFromResponse, apiErrorFromWatchEvent, parseRetryAfter, isNotFound, isConflict, isNamespaceTerminating, ApiError } from './errors.ts';

const status = (code: number, reason: string, extra: object = {}) => ({ kind: 'Status', status: 'Failure', code, reason, message: `m-${reason}`, ...extra });

test('HTTP answers map to the taxonomy', () => {
  const cases: [number, unknown, string][] = [
    [404, status(404, 'NotFound'), 'NotFound'],
    [409, status(409, 'AlreadyExists'), 'AlreadyExists'],
    [409, status(409, 'Conflict'), 'Conflict'],
    [422, status(422, 'Invalid'), 'Invalid'],
    [400, status(400, 'BadRequest'), 'BadRequest'],
    [410, status(410, 'Expired'), 'Gone'],
    [429, status(429, 'TooManyRequests'), 'TooManyRequests'],
    [403, status(403, 'Forbidden'), 'Forbidden'],
    [401, status(401, 'Unauthorized'), 'Unauthorized'],
    [500, status(500, 'InternalError'), 'ServerError'],
    [504, status(504, 'Timeout'), 'Timeout'],
    [503, 'plain text', 'ServerError'],
  ];
  for (const [code, body, reason] of cases) assert.equal(apiErrorFromResponse(code, body).reason, reason, `${code}`);
});

test('Invalid carries field causes; 429 carries Retry-After', () => {
  const inv = apiErrorFromResponse(422, status(422, 'Invalid', { details: { causes: [{ field: 'spec.port', message: 'too big' }] } }));
  assert.deepEqual(inv.causes, [{ field: 'spec.port', message: 'too big' }]);
  assert.equal(inv.transient, false);
  const tmr = apiErrorFromResponse(429, status(429, 'TooManyRequests'), '3');
  assert.equal(tmr.retryAfterMs, 3000);
  assert.equal(tmr.transient, true);
  const fromDetails = apiErrorFromResponse(429, status(429, 'TooManyRequests', { details: { retryAfterSeconds: 2 } }));
  assert.equal(fromDetails.retryAfterMs, 2000);
});

test('helpers and Retry-After parsing', () => {
  assert.equal(isNotFound(apiErrorFromResponse(404, undefined)), true);
  assert.equal(isConflict(new Error('x')), false);
  assert.equal(parseRetryAfter('5'), 5);
  assert.equal(parseRetryAfter(new Date(10_000).toUTCString(), 0), 10);
  assert.equal(parseRetryAfter('soon'), undefined);
  assert.ok(new ApiError({ reason: 'Network', code: 0, message: 'x' }).transient);
});

test('504 "Too large resource version" is its own reason, as client-go tells it apart (issue 12, item 3)', () => {
  // The body kube-apiserver 1.36 sends (captured from the local control plane).
  const body = {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 504, reason: 'Timeout',
    message: 'Timeout: Too large resource version: 99999999, current: 317',
    details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
  };
  const err = apiErrorFromResponse(504, body);
  assert.equal(err.reason, 'ResourceVersionTooLarge');
  assert.equal(err.transient, true);
  assert.equal(err.retryAfterMs, 1000);
  // API servers 1.17–1.18.5 set no cause: the message tells.
  assert.equal(apiErrorFromResponse(504, { ...body, details: {} }).reason, 'ResourceVersionTooLarge');
  assert.equal(apiErrorFromResponse(504, status(504, 'Timeout')).reason, 'Timeout', 'other timeouts stay Timeout');
});

test('isNamespaceTerminating: the 403 of a create in a namespace being deleted, by its cause or (old servers) its message', () => {
  const body = {
    kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403,
    message: 'services "web" is forbidden: unable to create new content in namespace team-a because it is being terminated',
    details: { name: 'web', kind: 'services', causes: [{ reason: 'NamespaceTerminating', message: 'namespace team-a is being terminated', field: 'metadata.namespace' }] },
  };
  assert.equal(isNamespaceTerminating(apiErrorFromResponse(403, body)), true);
  assert.equal(isNamespaceTerminating(apiErrorFromResponse(403, { ...body, details: { name: 'web', kind: 'services' } })), true, 'no cause, the message says it');
  assert.equal(isNamespaceTerminating(apiErrorFromResponse(403, { ...body, message: 'services is forbidden: User "x" cannot create resource', details: {} })), false, 'RBAC');
  assert.equal(isNamespaceTerminating(apiErrorFromResponse(404, { ...body, code: 404, reason: 'NotFound' })), false);
  assert.equal(isNamespaceTerminating(new Error('because it is being terminated')), false);
});

test('a watch ERROR event: its Status code when it is an HTTP status, else what its reason says, else 500', () => {
  const expired = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', message: 'too old resource version: 1 (2)' };
  assert.equal(apiErrorFromWatchEvent({ ...expired, code: 410 }).reason, 'Gone');
  // A code that is no HTTP status (a string, a fraction, none) must not hide a relist.
  for (const code of ['410', 410.5, undefined, null, 1e9]) {
    const err = apiErrorFromWatchEvent({ ...expired, code });
    assert.equal(err.reason, 'Gone', `code ${JSON.stringify(code)}`);
    assert.equal(err.code, 410);
  }
  assert.equal(apiErrorFromWatchEvent({ kind: 'Status', reason: 'Gone' }).reason, 'Gone');
  const other = apiErrorFromWatchEvent({ kind: 'Status', code: 'x', message: 'etcd is sad' });
  assert.deepEqual([other.reason, other.code, other.message], ['ServerError', 500, 'etcd is sad']);
  assert.equal(apiErrorFromWatchEvent({ kind: 'Status', code: 504, reason: 'Timeout', message: 'Too large resource version: 5, current: 4', details: { causes: [{ reason: 'ResourceVersionTooLarge' }] } }).reason, 'ResourceVersionTooLarge');
  assert.equal(apiErrorFromWatchEvent(null).code, 500);
});
