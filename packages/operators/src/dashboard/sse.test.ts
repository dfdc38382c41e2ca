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
import { DashboardModel } from './model.ts';
import { createDashboardServer, listen } from './http-server.ts';
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

test('with ?snapshot=true the first event is the snapshot, even when building it changes the model', async (t) => {
  const model = new DashboardModel();
  let judged = 0;
  const view = (state: 'connecting' | 'reachable') => ({ name: 'east', server: 'https://east.invalid', state, error: null, warnings: [], lastSync: judged ? `2026-12-06T00:00:0${judged % 10}Z` : null, microservices: 0, providers: 0 });
  model.setCluster(view('connecting') as never);
  // As ClusterSource does: asked for its view, it judges the cluster again and tells the model
  // of a change (here, every time).
  const source = { name: 'east', server: 'https://east.invalid', view: () => (judged++, model.setCluster(view('reachable') as never), model.cluster('east')!) };
  const server = createDashboardServer({ model, sources: [source as never], assets: new Map(), token: undefined, loopbackListen: true });
  const { port } = await listen(server, '127.0.0.1', 0);
  t.after(() => { server.closeAllConnections(); server.close(); });
  const client = connect(port, '127.0.0.1', () => client.write('GET /api/v1/events?snapshot=true HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n'));
  t.after(() => client.destroy());
  let received = '';
  client.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
  const deadline = Date.now() + 5_000;
  while (!received.includes('event: snapshot') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  const events = [...received.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
  assert.equal(events[0], 'snapshot', `events in order: ${events.join(', ')}`);
  assert.match(received, /"state":"reachable"/, 'the snapshot holds the view as judged when it was built');
});
