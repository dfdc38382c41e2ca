/**
 * The event stream against slow clients over real sockets: one that stops reading (a laptop put
 * to sleep, a stuck proxy) is cut once more than its bound waits, and what it held is let go, so
 * clients that never read cannot pin memory in the dashboard; one that is still reading a large
 * snapshot is not cut by the changes that follow it.
 */
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { EventStream } from './sse.ts';
import type { ServerEvent } from './shared/types.ts';

/** A server whose one request becomes a stream, and a client that sent it and does not read yet. */
async function pausedClient(t: TestContext, target: string): Promise<{ res: ServerResponse; client: Socket }> {
  const opened = Promise.withResolvers<ServerResponse>();
  const server = createServer((_req, res) => opened.resolve(res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const port = (server.address() as { port: number }).port;
  const client = connect(port, '127.0.0.1', () => client.write(`GET ${target} HTTP/1.1\r\nhost: x\r\n\r\n`));
  client.pause();
  t.after(() => client.destroy());
  return { res: await opened.promise, client };
}

test('a client that stops reading is disconnected and its buffered events are let go', async (t) => {
  // A client that sends its request and then never reads a byte.
  const { res } = await pausedClient(t, '/api/v1/events');
  let unsubscribed = false;
  const stream = new EventStream(res, () => (unsubscribed = true));
  const closed = new Promise<void>((r) => res.once('close', () => r()));
  const big = { type: 'cluster', cluster: { name: 'x'.repeat(256 * 1024) } } as unknown as ServerEvent;
  for (let i = 0; i < 200 && !unsubscribed; i++) {
    stream.send(big);
    await new Promise((r) => setImmediate(r));
  }
  assert.ok(unsubscribed, 'the stream gave up on the client');
  const timeout = new Promise<'held'>((r) => setTimeout(() => r('held'), 2_000).unref());
  assert.equal(await Promise.race([closed.then(() => 'let go' as const), timeout]), 'let go', 'the connection (and the megabytes waiting in it) is still held');
  assert.ok(res.socket === null || res.socket.destroyed);
});

test('a snapshot larger than the bound does not get the client cut off by the next event while it reads it', async (t) => {
  let received = '';
  // Busy for a moment (a slow link, a busy tab).
  const { res, client } = await pausedClient(t, '/api/v1/events?snapshot=true');
  client.setEncoding('utf8');
  let unsubscribed = false;
  const stream = new EventStream(res, () => (unsubscribed = true));
  // A fleet whose snapshot is 12 MiB, then the changes that follow it.
  const items = Array.from({ length: 12 * 1024 }, (_, i) => ({ name: `ms-${i}`, note: 'x'.repeat(1000) }));
  stream.send({ type: 'snapshot', clusters: [], microservices: items, providers: [] } as unknown as ServerEvent);
  for (let i = 0; i < 20; i++) {
    stream.send({ type: 'delete', cluster: 'c', kind: 'Microservice', key: `ns/ms-${i}` } as unknown as ServerEvent);
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.equal(unsubscribed, false, 'cut off while its snapshot was still on its way');
  client.on('data', (chunk: string) => (received += chunk));
  client.resume();
  const deadline = Date.now() + 10_000;
  while (!received.includes('ns/ms-19') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.ok(received.includes('event: snapshot') && received.includes('ns/ms-19'), 'the snapshot and every change after it arrived');
  stream.close();
});
