/**
 * The memory regression gate (issue 17, goal 7; as kube-rs gates its memory benchmark): a fixed
 * workload — 2 × 100 Microservices, one replica each (the Microservice, its Deployment, Service
 * and EndpointSlice: 4 cached objects each) — converged by `converge run` in a child process,
 * whose heap is measured after a full garbage collection once the first 100 and then all 200 are
 * Ready. The growth of the data heap (without code and bytecode, which grow as functions are
 * compiled on first use) between the two readings, per cached object added, must stay under the
 * limit; the figure is printed.
 *
 * The limit is the issue's goal, 2 KiB. The operator is started as the image starts it (its
 * Node.js flags, ADR 0034): without them this workload measured 1.7–2.7 KiB per object added in
 * five runs on the shared 2-core machine (optimized code and type feedback made while the cache
 * filled counted as data), with them 1.7 KiB — the same with four busy loops beside it, since the
 * probe runs V8's last-resort collection: with two plain `gc()` calls a loaded machine (CI) read
 * up to 4 MiB of dead objects as used at the first reading, and the gate printed −8.9 KB per
 * object, so it could not have caught a regression. What the gate covers is the cost of each object the
 * caches take in while the operator runs (store, indexes, queue, metrics series); what an
 * operator keeps of the lists it reads at start (the watcher used to hold every initial list,
 * managedFields included, for as long as the watch ran) is outside the two readings and is shown
 * by the benchmark's `memory` scenario instead.
 *
 * Timing is not asserted (principle 5); only bytes, after GC.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DeploymentKind, EndpointSliceKind, ServiceKind } from '@converge/runtime';
import { MicroserviceKind } from '../../../packages/operators/src/operators/microservice/index.ts';
import { OPERATOR_NODE_FLAGS } from '../../../packages/operators/src/operators/node-flags.ts';
import { eventually, kubeconfigPath, sleep, testClient, testNamespace } from '../../support/operator-harness.ts';

const MAIN = fileURLToPath(new URL('../../../packages/operators/src/cli/main.ts', import.meta.url));
const PROBE = fileURLToPath(new URL('../../../bench/support/memory-probe.mjs', import.meta.url));
const N = 100;
const LIMIT_BYTES_PER_OBJECT = 2048;

test(`heap per cached object stays under ${LIMIT_BYTES_PER_OBJECT} bytes (2 × ${N} Microservices, 4 cached objects each)`, { timeout: 300_000 }, async (t) => {
  const client = testClient();
  const ns = await testNamespace(t, client, 'memory-gate');
  const dir = mkdtempSync(join(tmpdir(), 'converge-memory-gate-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const memoryFile = join(dir, 'memory.json');
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ microservice: { defaults: { replicas: 1 } } }));
  // Started as the image starts the operator (its Node.js flags, ADR 0034).
  const child = spawn(process.execPath, [...OPERATOR_NODE_FLAGS, '--expose-gc', '--import', PROBE, MAIN, 'run',
    '--kubeconfig', kubeconfigPath(), '--namespace', ns, '--operators', 'microservice', '--config', join(dir, 'config.json'),
    '--webhook-bind-address=0', '--metrics-bind-address', '0', '--health-probe-bind-address', '0', '--log-level', 'warn'], {
    env: { ...process.env, BENCH_MEMORY_FILE: memoryFile },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); });
  t.after(() => { child.kill('SIGKILL'); });
  let seq = 0;
  const reading = async (): Promise<number> => {
    child.kill('SIGUSR2');
    const m = await eventually(() => {
      if (!existsSync(memoryFile)) return undefined;
      const read = JSON.parse(readFileSync(memoryFile, 'utf8')) as { seq: number; dataHeapUsed: number; gcForced: boolean };
      return read.seq > seq ? read : undefined;
    }, { timeoutMs: 15_000, intervalMs: 100, what: `a memory reading (stderr: ${stderr.slice(-300)})` });
    seq = m.seq;
    assert.ok(m.gcForced, 'the reading follows a full GC');
    return m.dataHeapUsed;
  };
  // The smallest of three readings 2 s apart, taken after the progress-status interval (15 s) has
  // passed: transient state (deferred progress statuses, in-flight requests and their buffers,
  // queued Events) is not what a cached object costs, and one reading alone varied by 2 KiB.
  const heap = async (): Promise<number> => {
    await sleep(16_000);
    const readings: number[] = [];
    for (let i = 0; i < 3; i++) {
      if (i > 0) await sleep(2_000);
      readings.push(await reading());
    }
    return Math.min(...readings);
  };
  const createAndWait = async (from: number): Promise<number> => {
    for (let i = from; i < from + N; i += 20) {
      await Promise.all(Array.from({ length: 20 }, (_, j) => client.create(MicroserviceKind, {
        metadata: { name: `gate-${i + j}`, namespace: ns },
        spec: { container: { image: 'ghcr.io/yrw9281/it30-todo-api:0.1.0', port: 8080 } },
      })));
    }
    await eventually(async () => {
      const list = await client.list(MicroserviceKind, { namespace: ns });
      return list.items.length === from + N && list.items.every((ms) => ms.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    }, { timeoutMs: 200_000, intervalMs: 1_000, what: `${from + N} Microservices Ready` });
    await sleep(3_000); // the last events applied
    return (await client.list(MicroserviceKind, { namespace: ns })).items.length
      + (await client.list(DeploymentKind, { namespace: ns })).items.length
      + (await client.list(ServiceKind, { namespace: ns })).items.length
      + (await client.list(EndpointSliceKind, { namespace: ns })).items.length;
  };
  await sleep(3_000); // caches synced
  const cachedBefore = await createAndWait(0);
  const before = await heap();
  const cachedAfter = await createAndWait(N);
  const after = await heap();
  const cached = cachedAfter - cachedBefore;
  const perObject = Math.round((after - before) / cached);
  t.diagnostic(`heap ${(before / 2 ** 20).toFixed(1)} MiB at ${cachedBefore} cached objects → ${(after / 2 ** 20).toFixed(1)} MiB at ${cachedAfter}: ${perObject} bytes per object added (limit ${LIMIT_BYTES_PER_OBJECT}, the goal)`);
  assert.ok(cached >= N * 4, `${cached} cached objects added`);
  assert.ok(perObject < LIMIT_BYTES_PER_OBJECT, `${perObject} bytes of heap per cached object (limit ${LIMIT_BYTES_PER_OBJECT})`);
});
