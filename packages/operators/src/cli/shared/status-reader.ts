/**
 * Reads what `converge status` and the live table of `converge dev` show: every Microservice and
 * DigitalHumanProvider in one namespace or all, straight from the API server (two list calls, no
 * cache), as a `StatusDocument`. A CRD that is not installed is a warning in the document, not an
 * error, so the other kind still shows; any other API error is thrown.
 * @module
 */
import { isNotFound } from '@converge/runtime';
import type { KubeClient, KubeObject, ResourceKind } from '@converge/runtime';
// Schema-free kinds and the status view only: `converge status` loads no schema (issue 17, goal 5).
import { MicroserviceKind } from '../../operators/microservice/api/kind.ts';
import { DigitalHumanProviderKind } from '../../operators/provider/api/kind.ts';
import { buildStatusDocument } from '../views/status-view.ts';
import type { StatusDocument } from '../views/index.ts';

async function listOrMissing<T extends KubeObject>(client: KubeClient, kind: ResourceKind<T>, namespace: string | null, warnings: string[], signal?: AbortSignal): Promise<T[]> {
  try {
    const { items } = await client.listAll(kind, { ...(namespace ? { namespace } : {}), ...(signal ? { signal } : {}) });
    return items;
  } catch (err) {
    if (isNotFound(err)) {
      warnings.push(`the ${kind.kind} CRD (${kind.plural}.${kind.group}) is not installed; install it with \`converge crds --apply\``);
      return [];
    }
    throw err;
  }
}

export async function readStatus(client: KubeClient, namespace: string | null, signal?: AbortSignal): Promise<StatusDocument> {
  const warnings: string[] = [];
  const [microservices, providers] = await Promise.all([
    listOrMissing(client, MicroserviceKind, namespace, warnings, signal),
    listOrMissing(client, DigitalHumanProviderKind, namespace, warnings, signal),
  ]);
  warnings.sort();
  return buildStatusDocument({ namespace, microservices, providers, warnings });
}
