/**
 * Example operator: mirrors every ConfigMap labelled `converge.example/mirror=true` into a copy
 * named `<name>-mirror` in the same namespace, owned by the source (so deleting the source
 * deletes the copy). Small on purpose: it exercises the public runtime API end to end — a
 * primary kind, an owned kind, Server-Side Apply, a no-op skip — and the test suite runs it,
 * so the API cannot drift from what an operator author writes.
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import { ConfigMapKind, controllerReference, hasLabels, ownershipOf, PermanentError } from '@converge/runtime';
import type { ConfigMap, Manager, Request, Result } from '@converge/runtime';

export const MIRROR_LABEL = 'converge.example/mirror';
const FIELD_MANAGER = 'configmap-mirror';

export function registerConfigMapMirror(manager: Manager): void {
  const store = manager.cache.informer(ConfigMapKind).store;
  manager
    .controller('configmap-mirror')
    .for(ConfigMapKind, { predicates: [hasLabels({ [MIRROR_LABEL]: 'true' })] })
    .owns(ConfigMapKind)
    .withOptions({ maxConcurrentReconciles: 2 })
    .complete(async (request: Request, signal: AbortSignal): Promise<Result> => {
      const source = store.get(request.key);
      if (!source || source.metadata.labels?.[MIRROR_LABEL] !== 'true' || source.metadata.deletionTimestamp) return {};
      const mirrorName = `${request.name}-mirror`;
      const existing = store.get({ namespace: request.namespace, name: mirrorName });
      if (existing && ownershipOf(existing, source, ConfigMapKind) !== 'owned') {
        throw new PermanentError('OwnershipConflict', `${mirrorName} exists and is not controlled by ${request.name}`);
      }
      if (existing && isDeepStrictEqual(existing.data ?? {}, source.data ?? {})) return {}; // converged: no write
      const desired: ConfigMap = {
        metadata: { name: mirrorName, namespace: request.namespace, ownerReferences: [controllerReference(source, ConfigMapKind)] },
        data: source.data ?? {},
      };
      await manager.client.apply(ConfigMapKind, desired, { fieldManager: FIELD_MANAGER, force: true, signal });
      request.log.info({ mirror: mirrorName }, 'mirrored');
      return {};
    });
}
