/**
 * Reads what `converge status` and the live table of `converge dev` show: every Microservice and
 * DigitalHumanProvider in one namespace or all, straight from the API server (two list calls, no
 * cache), as a `StatusDocument`. A CRD that is not installed, or a kind the caller may not list
 * (403), is a warning in the document, not an error, so the other kind still shows; a refusal
 * with nothing listed at all, or any other API error, is thrown.
 * @module
 */
import { isForbidden, isNotFound } from '@converge/runtime';
import type { KubeClient, KubeObject, ResourceKind } from '@converge/runtime';
// Schema-free kinds and the status view only: `converge status` loads no schema (issue 17, goal 5).
import { MicroserviceKind } from '../../operators/microservice/api/kind.ts';
import { DigitalHumanProviderKind } from '../../operators/provider/api/kind.ts';
import { buildStatusDocument } from '../views/status-view.ts';
import type { StatusDocument } from '../views/index.ts';

async function listOrMissing<T extends KubeObject>(client: KubeClient, kind: ResourceKind<T>, namespace: string | null, warnings: string[], refused: unknown[], signal?: AbortSignal): Promise<T[]> {
  try {
    const { items } = await client.listAll(kind, { ...(namespace ? { namespace } : {}), ...(signal ? { signal } : {}) });
    return items;
  } catch (err) {
    if (isNotFound(err)) {
      warnings.push(`the ${kind.kind} CRD (${kind.plural}.${kind.group}) is not installed; install it with \`converge crds --apply\``);
      return [];
    }
    if (isForbidden(err)) {
      warnings.push(`not allowed to list ${kind.kind}s: ${(err as Error).message}`);
      refused.push(err);
      return [];
    }
    throw err;
  }
}

export async function readStatus(client: KubeClient, namespace: string | null, signal?: AbortSignal): Promise<StatusDocument> {
  const warnings: string[] = [];
  const refused: unknown[] = [];
  const [microservices, providers] = await Promise.all([
    listOrMissing(client, MicroserviceKind, namespace, warnings, refused, signal),
    listOrMissing(client, DigitalHumanProviderKind, namespace, warnings, refused, signal),
  ]);
  // A kind refused and nothing listed (the other refused too, or its CRD not installed): an
  // error, not an empty table.
  const missing = warnings.length - refused.length;
  if (refused.length > 0 && refused.length + missing === 2) throw refused[0];
  warnings.sort();
  return buildStatusDocument({ namespace, microservices, providers, warnings });
}
