import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { VendorError, isVendorError, kindForStatus } from './index.ts';
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

  it('marks only RateLimited, Server, Timeout and Network transient', () => {
    const transient = (['NotFound', 'Unauthorized', 'RateLimited', 'Invalid', 'Server', 'Timeout', 'Network'] as const).filter(
      (kind) => new VendorError({ kind, operation: 'getInstance', message: 'x' }).transient,
    );
    assert.deepEqual(transient, ['RateLimited', 'Server', 'Timeout', 'Network']);
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
