/**
 * Objects the scenarios start from, created by the benchmark's own client with bounded
 * concurrency: Microservices by the hundred, and a worker pool helper.
 * @module
 */
import type { KubeClient } from '@converge/runtime';
import { MicroserviceKind } from '../../packages/operators/src/operators/microservice/index.ts';
import type { Microservice } from '../../packages/operators/src/operators/microservice/index.ts';

/** The image of the seed's Todo API (the simulator runs pods without pulling images). */
export const IMAGE = 'ghcr.io/yrw9281/it30-todo-api';
export const IMAGE_TAGS = ['0.1.0', '0.1.1'] as const;

export function microservice(namespace: string, name: string, tag: string = IMAGE_TAGS[0], port = 8080): Microservice {
  return { metadata: { name, namespace, labels: { 'converge.dev/bench': 'true' } }, spec: { container: { image: `${IMAGE}:${tag}`, port } } };
}

export const msName = (i: number) => `ms-${String(i).padStart(5, '0')}`;

/** Runs fn over items with at most `concurrency` in flight; rejects on the first error. */
export async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

export async function createMicroservices(client: KubeClient, namespace: string, count: number, options: { from?: number; concurrency?: number } = {}): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => msName((options.from ?? 0) + i));
  await pool(names, options.concurrency ?? 16, async (name) => {
    await client.create(MicroserviceKind, microservice(namespace, name));
  });
  return names;
}
