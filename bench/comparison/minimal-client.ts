/**
 * The plain client of the `compare` benchmark, run as a child process: for every Microservice
 * that already exists in the namespace it does exactly the minimal writes — create the
 * Deployment, create the Service (the operator's own renderDesiredState), and one status write
 * marking `ResourcesApplied` for the generation — with N Microservices in flight and nothing
 * else: no watch, no cache, no retry, no Ready status. It is the floor any operator is compared
 * with: 3 writes per Microservice and one list.
 *
 *   node bench/comparison/minimal-client.ts --kubeconfig <path> --namespace <ns> [--in-flight 4] [--qps 0 --burst 100] [--watch]
 *
 * `--qps 0` (the default) means no client-side limit. `--watch` also lists and watches what
 * Converge watches in the namespace (Microservices, Deployments, Services, EndpointSlices) with
 * the same client, decoding and discarding every event, from before the first write to the last:
 * what watching costs the machine, without an operator's cache or reconciles. Prints one JSON line
 * `{ done: true, microservices, writes, watchEvents, requestMs, cpuMs, maxRssBytes }` and exits 0
 * when every status is written.
 * @module
 */
import { parseArgs } from 'node:util';
import { DeploymentKind, EndpointSliceKind, KubeClient, ServiceKind, loadKubeConfig } from '@converge/runtime';
import type { KubeObject, ResourceKind } from '@converge/runtime';
import { MicroserviceKind, renderDesiredState } from '../../packages/operators/src/operators/microservice/index.ts';
import { pool } from '../support/fixtures.ts';

import { MINIMAL_CLIENT_USER_AGENT } from './contenders.ts';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: 'string' },
      namespace: { type: 'string' },
      'in-flight': { type: 'string', default: '4' },
      qps: { type: 'string', default: '0' },
      burst: { type: 'string', default: '100' },
      watch: { type: 'boolean', default: false },
    },
  });
  const inFlight = Number(values['in-flight']);
  const qps = Number(values.qps);
  const burst = Number(values.burst);
  if (!values.kubeconfig || !values.namespace || !(inFlight >= 1) || !(qps >= 0) || !(burst >= 1)) {
    process.stderr.write('usage: minimal-client.ts --kubeconfig <path> --namespace <ns> [--in-flight n] [--qps n (0: no limit)] [--burst n] [--watch]\n');
    process.exit(2);
  }
  const namespace = values.namespace;
  const client = new KubeClient({ kubeConfig: loadKubeConfig(values.kubeconfig), userAgent: MINIMAL_CLIENT_USER_AGENT, qps, burst, fieldManager: 'bench-minimal-client' });
  let writes = 0;
  // Time per request, by verb and resource (what Converge's rest_client_request_duration_seconds says of its own).
  const requestMs: Record<string, { count: number; sumMs: number }> = {};
  client.observe({
    onRequest: (r) => {
      if (!['get', 'list', 'watch'].includes(r.verb)) writes += 1;
      const t = (requestMs[`${r.verb} ${r.resource}`] ??= { count: 0, sumMs: 0 });
      t.count += 1;
      t.sumMs += r.durationMs;
    },
  });
  process.stdout.write(`minimal client started: namespace=${namespace} in-flight=${inFlight} client-limit=${qps > 0 ? `${qps}/s burst ${burst}` : 'none'}${values.watch ? ' watching' : ''}\n`);

  const watching = new AbortController();
  let watchEvents = 0;
  // Each kind listed, then watched from the list's version until the last write, as an informer
  // would; the events are decoded by the client and dropped.
  const watchAll = async <T extends KubeObject>(kind: ResourceKind<T>, resourceVersion: string): Promise<void> => {
    let rv = resourceVersion;
    while (!watching.signal.aborted) {
      try {
        for await (const event of client.watch(kind, { namespace, resourceVersion: rv, allowWatchBookmarks: true }, watching.signal)) {
          watchEvents += 1;
          rv = event.object.metadata.resourceVersion ?? rv;
        }
      } catch (err) {
        if (!watching.signal.aborted) throw err;
      }
    }
  };
  const { items, resourceVersion } = await client.listAll(MicroserviceKind, { namespace });
  const listed = values.watch
    ? await Promise.all([DeploymentKind, ServiceKind, EndpointSliceKind].map(async (kind: ResourceKind) => ({ kind, version: (await client.listAll(kind, { namespace })).resourceVersion })))
    : [];
  const watches = values.watch ? [watchAll(MicroserviceKind, resourceVersion), ...listed.map(({ kind, version }) => watchAll(kind, version))] : [];
  await pool(items, inFlight, async (ms) => {
    const { deployment, service } = renderDesiredState(ms);
    await client.create(DeploymentKind, deployment);
    await client.create(ServiceKind, service);
    const body = {
      status: {
        phase: 'ResourcesApplied',
        observedGeneration: ms.metadata.generation ?? 0,
        managedResources: { deployment: ms.metadata.name!, service: ms.metadata.name! },
      },
    };
    await client.patch(MicroserviceKind, { namespace, name: ms.metadata.name! }, { type: 'merge', body }, { subresource: 'status' });
  });
  watching.abort();
  await Promise.all(watches);
  const cpu = process.cpuUsage();
  process.stdout.write(`${JSON.stringify({ done: true, microservices: items.length, writes, watchEvents, requestMs, cpuMs: (cpu.user + cpu.system) / 1000, maxRssBytes: process.resourceUsage().maxRSS * 1024 })}\n`);
  await client.close();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`minimal client: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
