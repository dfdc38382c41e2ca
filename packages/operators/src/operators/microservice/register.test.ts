/**
 * The Microservice controller's retry policy. A child write the cluster refuses for a long time
 * (a ResourceQuota, an RBAC gap) and then allows reaches nothing watched: only the next retry
 * notices. With the runtime's default limiter (5 ms doubling to 1,000 s) that retry came up to
 * 16.7 minutes late; with the controller's own it comes within `maxRetryDelayMs`. Read from the
 * controller's own queue, on a fake clock: the controller never starts, no request is made and
 * no time passes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, Manager, createLogger } from '@converge/runtime';
import { registerMicroserviceOperator } from './register.ts';
import { unreachableKubeConfig } from '../unreachable-cluster.test-support.ts';

const nowhere = unreachableKubeConfig;

function retryDelays(options: { maxRetryDelayMs?: number }, failures: number): number[] {
  const manager = new Manager({ kubeConfig: nowhere(), clock: new FakeClock(), log: createLogger({ level: 'silent' }) });
  const controller = registerMicroserviceOperator(manager, { events: { normal() {}, warning() {} }, ...options });
  const delays = Array.from({ length: failures }, () => controller.queue.addRateLimited('ns/svc'));
  controller.queue.shutDown();
  return delays;
}

test('20 failures in a row never wait more than maxRetryDelayMs, and the waits grow up to it (jittered below it)', () => {
  const delays = retryDelays({ maxRetryDelayMs: 45_000 }, 20);
  assert.ok(Math.max(...delays) <= 45_000, `longest wait ${Math.round(Math.max(...delays))} ms`);
  assert.ok(delays[0]! < 100, `first wait ${delays[0]} ms`);
  assert.ok(delays.slice(-5).every((d) => d >= 45_000 / 2), `last waits ${delays.slice(-5).map(Math.round).join(', ')} ms`);
});

test('without an option the cap is 60 s, the operator configuration\'s default', () => {
  const delays = retryDelays({}, 20);
  assert.ok(Math.max(...delays) <= 60_000, `longest wait ${Math.round(Math.max(...delays))} ms`);
  assert.ok(delays.at(-1)! >= 30_000);
});
