import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { VENDOR_ERROR_KINDS, VendorError, endpointPause, isVendorError, kindForStatus } from './index.ts';
import { redact, vendorErrorFromException, vendorErrorFromResponse } from './errors.ts';

describe('vendor error taxonomy', () => {
  it('maps statuses to kinds', () => {
    const table: [number, string][] = [
      [400, 'Invalid'],
      [401, 'Unauthorized'],
      [403, 'Unauthorized'],
      [404, 'NotFound'],
      [405, 'Invalid'],
      [408, 'Timeout'],
      [409, 'Invalid'],
      [422, 'Invalid'],
      [429, 'RateLimited'],
      [500, 'Server'],
      [503, 'Server'],
    ];
    for (const [status, kind] of table) assert.equal(kindForStatus(status), kind, String(status));
  });

  it('a status below 400 is an unexpected answer: Server (transient), whatever the body says', () => {
    for (const status of [100, 101, 199, 201, 204, 206, 299, 301, 302, 304, 307, 308, 399]) {
      assert.equal(kindForStatus(status), 'Server', String(status));
      assert.equal(kindForStatus(status, 'AccountSuspended'), 'Server', `${status} AccountSuspended`);
      const body = JSON.stringify({ error: { code: 'InvalidRequest', message: 'moved permanently', field: 'region', requestId: 'b-1' } });
      const err = vendorErrorFromResponse('getInstance', status, body, { requestId: 'h-1', secret: 'tok' });
      assert.deepEqual(
        [err.kind, err.transient, err.status, err.message, err.code, err.field, err.requestId, err.retryAfterMs],
        ['Server', true, status, `vendor getInstance: unexpected answer (HTTP ${status})`, undefined, undefined, 'h-1', undefined],
      );
    }
  });

  it('marks the waits (quota, throttling, rate limit) and the no-answers transient; the rest need a change first', () => {
    const transient = VENDOR_ERROR_KINDS.filter((kind) => new VendorError({ kind, operation: 'getInstance', message: 'x' }).transient);
    assert.deepEqual(transient, ['QuotaExhausted', 'InstanceThrottled', 'RateLimited', 'Server', 'Timeout', 'Network']);
  });

  it("the vendor's code decides before the status: suspension, an instance's quota or pace", () => {
    const table: [number, string | undefined, string][] = [
      [403, 'AccountSuspended', 'AccountSuspended'],
      [402, undefined, 'AccountSuspended'],
      [403, undefined, 'Unauthorized'],
      [429, 'QuotaExhausted', 'QuotaExhausted'],
      [403, 'QuotaExhausted', 'QuotaExhausted'],
      [429, 'InstanceThrottled', 'InstanceThrottled'],
      [429, 'RateLimited', 'RateLimited'],
      [429, undefined, 'RateLimited'],
    ];
    for (const [status, code, kind] of table) assert.equal(kindForStatus(status, code), kind, `${status} ${code}`);
    const err = vendorErrorFromResponse('setLimits', 403, JSON.stringify({ error: { code: 'AccountSuspended', message: 'account default is suspended (NonPayment)' } }));
    assert.deepEqual([err.kind, err.transient, err.code], ['AccountSuspended', false, 'AccountSuspended']);
    const quota = vendorErrorFromResponse('getInstance', 429, JSON.stringify({ error: { code: 'QuotaExhausted', message: 'used' } }), { retryAfterMs: 3_600_000 });
    assert.deepEqual([quota.kind, quota.transient, quota.retryAfterMs], ['QuotaExhausted', true, 3_600_000]);
  });

  it('only a 429 about the endpoint (or a 5xx) pauses the endpoint; one about an instance never does', () => {
    assert.equal(endpointPause(429, undefined), 'rate-limit');
    assert.equal(endpointPause(429, 'RateLimited'), 'rate-limit');
    assert.equal(endpointPause(429, 'QuotaExhausted'), undefined);
    assert.equal(endpointPause(429, 'InstanceThrottled'), undefined);
    assert.equal(endpointPause(503, 'ServiceUnavailable'), 'server');
    assert.equal(endpointPause(403, 'AccountSuspended'), undefined);
    assert.equal(endpointPause(400, 'InvalidRequest'), undefined);
  });

  it('an untrusted certificate names the setting that fixes it, not Node\'s --use-system-ca', () => {
    const tls = Object.assign(new Error('unable to verify the first certificate; if the root CA is installed locally, try running Node.js with --use-system-ca'), { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
    const err = vendorErrorFromException('getHealth', tls, false, 1000, 'tok', 'set provider.vendor.caFile to the PEM file of the CA that signed it');
    assert.equal(err.kind, 'Network');
    assert.equal(err.code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    assert.equal(err.message, "vendor getHealth: the vendor's TLS certificate is not signed by a trusted CA (UNABLE_TO_VERIFY_LEAF_SIGNATURE): set provider.vendor.caFile to the PEM file of the CA that signed it");
    assert.doesNotMatch(err.message, /use-system-ca/);
    for (const code of ['SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY']) {
      assert.match(vendorErrorFromException('getHealth', Object.assign(new Error('x'), { code }), false, 1000).message, /not signed by a trusted CA.*`ca`/);
    }
    assert.match(vendorErrorFromException('getHealth', Object.assign(new Error('x'), { code: 'CERT_HAS_EXPIRED' }), false, 1000).message, /expired/);
    assert.match(vendorErrorFromException('getHealth', Object.assign(new Error('x'), { code: 'ERR_TLS_CERT_ALTNAME_INVALID' }), false, 1000).message, /not for this host.*spec\.endpoint/);
  });

  it('bounds what the vendor says in an error', () => {
    const long = vendorErrorFromResponse('getInstance', 500, `<html>${'x'.repeat(100_000)}</html>`);
    assert.ok(long.message.length < 260, String(long.message.length));
    const multi = vendorErrorFromResponse('getInstance', 500, JSON.stringify({ error: { message: 'line one\nline two\ttabbed' } }));
    assert.match(multi.message, /: line one line two tabbed$/);
  });

  it('reads the standard error body and keeps Retry-After', () => {
    const err = vendorErrorFromResponse(
      'updateInstance',
      422,
      JSON.stringify({ error: { code: 'ImmutableField', message: 'region is immutable', field: 'region', requestId: 'req-9' } }),
    );
    assert.equal(err.kind, 'Invalid');
    assert.equal(err.transient, false);
    assert.deepEqual([err.status, err.code, err.field, err.requestId], [422, 'ImmutableField', 'region', 'req-9']);
    assert.equal(err.message, 'vendor updateInstance: HTTP 422 ImmutableField: region is immutable');
    const limited = vendorErrorFromResponse('getInstance', 429, 'slow down', { retryAfterMs: 2000, requestId: 'h-1' });
    assert.deepEqual([limited.kind, limited.retryAfterMs, limited.requestId, limited.code], ['RateLimited', 2000, 'h-1', undefined]);
    assert.match(limited.message, /slow down/);
    assert.ok(isVendorError(limited, 'RateLimited'));
    assert.ok(!isVendorError(limited, 'Server'));
    assert.ok(!isVendorError(new Error('x')));
  });

  it('never lets a token through, even when a server echoes it', () => {
    const token = 's3cr3t-token';
    const err = vendorErrorFromResponse('getInstance', 500, JSON.stringify({ error: { message: `bad header Bearer ${token}` } }), { secret: token });
    assert.ok(!err.message.includes(token));
    assert.match(err.message, /\[redacted\]/);
    const net = vendorErrorFromException('getInstance', Object.assign(new Error(`boom ${token}`), { code: 'ECONNRESET' }), false, 1000, token);
    assert.ok(!JSON.stringify({ m: net.message, c: net.cause }).includes(token));
    assert.equal(redact('abc', ''), 'abc');
  });

  it('classifies exceptions: deadline and undici timeouts are Timeout, the rest Network, with the innermost code', () => {
    assert.equal(vendorErrorFromException('getHealth', new Error('aborted'), true, 500).kind, 'Timeout');
    assert.equal(vendorErrorFromException('getHealth', Object.assign(new Error('t'), { code: 'UND_ERR_HEADERS_TIMEOUT' }), false, 500).kind, 'Timeout');
    const wrapped = Object.assign(new Error('fetch failed'), { code: 'UND_ERR_SOCKET', cause: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }) });
    const err = vendorErrorFromException('getHealth', wrapped, false, 500);
    assert.deepEqual([err.kind, err.code, err.status, err.transient], ['Network', 'ECONNREFUSED', 0, true]);
  });
});
