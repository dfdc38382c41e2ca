/**
 * The client's request deadlines, through the fault proxy on the real API server: a request ends
 * as a success, a `Timeout` ApiError (only once its own timeout has passed) or the caller's abort
 * reason (only once the caller aborted) — never anything else, whatever the timing of the three —
 * and a finished request leaves no signal or timer behind (issue 17: `AbortSignal.timeout` kept
 * one of each alive for the whole timeout after the request, ≈ 1,000 at once on a cold start).
 *
 * Timing is not asserted beyond "not before its cause" (principle 5).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { queryObjects, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { ApiError, ConfigMapKind, KubeClient, loadKubeConfig } from '@converge/runtime';
import { startFaultProxy } from '../../support/fault-proxy.ts';
import { kubeconfigPath, testClient, testNamespace } from '../../support/operator-harness.ts';

const proxy = await startFaultProxy({ kubeconfigPath: kubeconfigPath() });
after(() => proxy.close());

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const liveSignals = (): number => {
  gc();
  return queryObjects(AbortSignal, { format: 'count' }) as number;
};

test('every request ends as a success, its own Timeout or the caller\'s abort, each only after its cause (random timing, slowed responses)', { timeout: 240_000 }, async (t) => {
  const admin = testClient();
  const ns = await testNamespace(t, admin, 'deadlines');
  for (let i = 0; i < 3; i++) await admin.create(ConfigMapKind, { metadata: { name: `big-${i}`, namespace: ns }, data: { blob: 'x'.repeat(20_000) } });
  // Every list of this namespace's ConfigMaps (≈ 60 KB) arrives at 100 KB/s: ≈ 0.6 s.
  const release = proxy.inject({ match: { path: new RegExp(`/namespaces/${ns}/configmaps$`), watch: false }, bytesPerSecond: 100_000 });
  t.after(release);
  const client = new KubeClient({ kubeConfig: loadKubeConfig(proxy.kubeconfigPath), qps: 0 });
  const outcomes = { ok: 0, timeout: 0, aborted: 0 };
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 30, max: 1_500 }), fc.option(fc.integer({ min: 0, max: 1_500 }), { nil: undefined }), async (timeoutMs, abortAfterMs) => {
      const caller = new AbortController();
      const reason = new Error('caller stopped');
      const timer = abortAfterMs === undefined ? undefined : setTimeout(() => caller.abort(reason), abortAfterMs);
      const started = performance.now();
      try {
        await client.list(ConfigMapKind, { namespace: ns, timeoutMs, signal: caller.signal });
        outcomes.ok++;
      } catch (err) {
        const elapsed = performance.now() - started;
        if (err === reason) {
          outcomes.aborted++;
          assert.ok(caller.signal.aborted, 'the caller\'s reason only after the caller aborted');
        } else {
          assert.ok(err instanceof ApiError, `an ApiError, not ${String(err)}`);
          assert.equal(err.reason, 'Timeout', `the only other ending is Timeout: ${err.message}`);
          assert.ok(!caller.signal.aborted || (abortAfterMs ?? Infinity) >= timeoutMs - 5, 'a caller\'s abort that came first wins');
          assert.ok(elapsed >= timeoutMs - 5, `Timeout after ${elapsed.toFixed(0)} ms, before its ${timeoutMs} ms`);
          outcomes.timeout++;
        }
      } finally {
        clearTimeout(timer);
      }
    }),
    { numRuns: 40 },
  );
  t.diagnostic(`outcomes: ${JSON.stringify(outcomes)}`);
  assert.ok(outcomes.timeout > 0 && outcomes.ok + outcomes.aborted > 0, 'the search reached more than one ending');
});

test('finished requests leave no AbortSignal behind (200 requests, default 30 s timeout, with and without a caller\'s signal)', async (t) => {
  const admin = testClient();
  const ns = await testNamespace(t, admin, 'deadline-leak');
  const client = new KubeClient({ kubeConfig: loadKubeConfig(proxy.kubeconfigPath), qps: 0 });
  await client.list(ConfigMapKind, { namespace: ns }); // connections and lazy modules in place
  const before = liveSignals();
  const caller = new AbortController();
  for (let i = 0; i < 100; i++) {
    await client.list(ConfigMapKind, { namespace: ns });
    await client.list(ConfigMapKind, { namespace: ns, signal: caller.signal });
  }
  const grown = liveSignals() - before;
  t.diagnostic(`live AbortSignals after 200 requests: ${grown} more than before`);
  assert.ok(grown < 20, `${grown} AbortSignals outlived their requests`);
});
