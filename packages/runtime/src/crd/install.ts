/**
 * Installing CRDs: Server-Side Apply of each definition, then a wait until the API server serves
 * every one of them (condition `Established`), so that the next request for the kind succeeds.
 *
 * Guarantees: idempotent (applying the same definitions again changes nothing and returns as
 * soon as they are established); safe to call from several processes at once (apply with
 * `force` under one field manager). Errors: the API server's (`ApiError`), or a plain `Error`
 * naming the CRDs not established within the timeout (the condition's message when it has one).
 * @module
 */
import { CustomResourceDefinitionKind } from '../objects/index.ts';
import type { CustomResourceDefinition } from '../objects/index.ts';
import type { KubeClient } from '../client/index.ts';
import type { CustomResourceDefinitionV1 } from './types.ts';

export interface InstallCrdsOptions {
  /** Field manager of the apply (default `converge-crds`). */
  fieldManager?: string;
  /** How long to wait for `Established` (default 60 000 ms). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

interface CrdConditions {
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
}

export async function installCustomResourceDefinitions(
  client: KubeClient,
  crds: readonly (CustomResourceDefinitionV1 | CustomResourceDefinition)[],
  options: InstallCrdsOptions = {},
): Promise<void> {
  const fieldManager = options.fieldManager ?? 'converge-crds';
  for (const crd of crds) {
    await client.apply(CustomResourceDefinitionKind, crd as CustomResourceDefinition, { fieldManager, force: true, ...(options.signal ? { signal: options.signal } : {}) });
  }
  const deadline = performance.now() + (options.timeoutMs ?? 60_000);
  let pending = crds.map((c) => c.metadata.name ?? '');
  const notes = new Map<string, string>();
  while (pending.length > 0) {
    const still: string[] = [];
    for (const name of pending) {
      const live = await client.get(CustomResourceDefinitionKind, { namespace: '', name }, options.signal ? { signal: options.signal } : {});
      const established = (live.status as CrdConditions | undefined)?.conditions?.find((c) => c.type === 'Established');
      if (established?.status === 'True') continue;
      still.push(name);
      if (established?.message) notes.set(name, established.message);
    }
    pending = still;
    if (pending.length === 0) return;
    if (performance.now() > deadline) {
      throw new Error(`CRDs not established in time: ${pending.map((n) => (notes.has(n) ? `${n} (${notes.get(n)})` : n)).join(', ')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    options.signal?.throwIfAborted();
  }
}
