import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { readText } from './transport.ts';

const asResponse = (r: Readable) => r as unknown as IncomingMessage;

test('readText: a character split between chunks is decoded whole', async () => {
  const bytes = Buffer.from('{"note":"naïve → 日本"}', 'utf8');
  // Every split point, including inside each multi-byte character.
  for (let i = 1; i < bytes.length; i++) {
    const text = await readText(asResponse(Readable.from([bytes.subarray(0, i), bytes.subarray(i)], { objectMode: false })));
    assert.equal(text, '{"note":"naïve → 日本"}', `split at byte ${i}`);
  }
});

test('readText: an empty body is the empty string', async () => {
  assert.equal(await readText(asResponse(Readable.from([], { objectMode: false }))), '');
});

test('readText: a response destroyed before its end rejects (with or without an error)', async () => {
  const cut = new Readable({ read() {} });
  const pending = readText(asResponse(cut));
  cut.push(Buffer.from('{"partial":'));
  cut.destroy();
  await assert.rejects(pending, /ended before its body was complete/);

  const failed = new Readable({ read() {} });
  const pending2 = readText(asResponse(failed));
  failed.push(Buffer.from('{"partial":'));
  failed.destroy(new Error('socket hang up'));
  await assert.rejects(pending2, /socket hang up/);
});

test('readText: a response that failed or ended before it is called rejects at once (no wait for an event that already came)', async () => {
  const failed = new Readable({ read() {} });
  failed.on('error', () => {});
  failed.destroy(new Error('connection reset'));
  await new Promise((r) => setImmediate(r));
  await assert.rejects(readText(asResponse(failed)), /connection reset/);

  const closed = new Readable({ read() {} });
  closed.destroy();
  await new Promise((r) => setImmediate(r));
  await assert.rejects(readText(asResponse(closed)), /ended before its body was complete/);
});
