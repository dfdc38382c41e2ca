/**
 * The cluster source's judgement over time, on a fake clock: the cache's watch health is
 * scripted (the source is never started, so no request is made). The rules themselves are
 * `cluster-state.ts`'s and tested in the dashboard's server tests; here, which clock they run on.
 */
import { describe, it } from 'node:test';
import { createServer } from 'node:net';
import type { Socket } from 'node:net';
import assert from 'node:assert/strict';
import { FakeClock } from '@converge/runtime';
import { KubeConfig } from '@converge/runtime';
import type { WatchHealth } from '@converge/runtime';
import { ClusterSource } from './cluster-source.ts';
import { DashboardModel } from './model.ts';
import { unreachableKubeConfig } from '../operators/unreachable-cluster.test-support.ts';

const NOW = Date.parse('2026-12-05T10:00:00.000Z');

const nowhere = unreachableKubeConfig;

/** A watch that listed, failed twice and reconnected: open again, no event since. */
const reconnected: WatchHealth = {
  kind: 'Microservice', namespace: '', state: 'watching', synced: true, healthy: false,
  lastProgressAt: NOW - 5_000, lastProgressAgeMs: 5_000, restarts: 3, relists: 0,
  consecutiveFailures: 2, lastError: 'connect ECONNREFUSED 127.0.0.1:6443',
};

function sourceOn(clock: FakeClock): ClusterSource {
  const source = new ClusterSource({ name: 'east', kubeConfig: nowhere() }, new DashboardModel(), { clock });
  source.cache.health = () => [reconnected];
  return source;
}

describe('ClusterSource on its clock', () => {
  it('a reconnected watch counts as up after staying open 1 s of monotonic time, whatever the wall clock does meanwhile', async (t) => {
    for (const stepMs of [0, -3_600_000, 3_600_000]) {
      await t.test(`wall clock stepped by ${stepMs} ms`, () => {
        const clock = new FakeClock(NOW);
        const source = sourceOn(clock);
        assert.equal(source.view().state, 'unreachable', 'just reconnected: still down');
        clock.stepWall(stepMs);
        clock.advance(500);
        assert.equal(source.view().state, 'unreachable', 'open for 0.5 s: still down');
        clock.advance(600);
        const view = source.view();
        assert.equal(view.state, 'reachable', 'open for 1.1 s: up');
        assert.equal(view.syncedAt, new Date(clock.now()).toISOString(), 'the first sync is dated on the wall clock');
      });
    }
  });
});

describe('ClusterSource against an API server that accepts connections and never answers', () => {
  it('is unreachable, saying so, within a few request timeouts (not "connecting" for minutes)', async (t) => {
    const sockets = new Set<Socket>();
    const blackhole = createServer((socket) => { sockets.add(socket); socket.on('error', () => undefined); });
    await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
    t.after(() => { for (const s of sockets) s.destroy(); blackhole.close(); });
    const { port } = blackhole.address() as { port: number };
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'hung', server: `http://127.0.0.1:${port}` }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'hung', cluster: 'hung', user: 'u' }],
      currentContext: 'hung',
    });
    const source = new ClusterSource({ name: 'hung', kubeConfig }, new DashboardModel(), { requestTimeoutMs: 300, healthIntervalMs: 50 });
    const stop = new AbortController();
    const running = source.start(stop.signal);
    try {
      const deadline = Date.now() + 10_000;
      while (source.view().state !== 'unreachable' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const view = source.view();
      assert.equal(view.state, 'unreachable');
      assert.match(view.error ?? '', /no answer from .* within 300 ms/);
    } finally {
      stop.abort();
      await running;
      await source.client.close();
    }
  });
});
