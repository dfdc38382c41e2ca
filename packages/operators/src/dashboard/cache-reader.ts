/**
 * `converge explain`'s facts read from a cluster source's informer cache instead of the API
 * server (`ObjectReader`, see `cli/shared/explain-facts.ts`): same-named children from the
 * Deployment and Service stores, EndpointSlices and Events through indexes (an Event counts only
 * in the namespace asked for, whatever it regards). Costs no request.
 *
 * Secrets are not cached (the dashboard has no access to them): a provider's credentials are
 * reported as not checked, and its Ready condition (e.g. `CredentialsMissing`) says what the
 * operator found.
 * @module
 */
import { EndpointSliceKind, EventKind } from '@converge/runtime';
import type { Cache, KubeObject } from '@converge/runtime';
import type { ObjectReader } from '../cli/shared/explain-facts.ts';
import { REGARDING_UID_INDEX, SERVICE_SLICES_INDEX } from './cluster-source.ts';

export const SECRETS_NOT_READ = 'the dashboard does not read Secrets (see the Ready condition)';

/**
 * `unreadable` names the kinds the cluster source finds refused now (`ClusterView.unreadableKinds`)
 * with its warning for each: the explanation then says it cannot tell, instead of "missing".
 */
export function cacheReader(cache: Cache, unreadable: (kind: string) => string | undefined = () => undefined): ObjectReader {
  return {
    unreadable: (kind) => unreadable(kind.kind),
    get: async (kind, namespace, name) => cache.store(kind).get({ namespace, name }),
    listLabelled: async (kind, namespace, label, value) => {
      if (kind.plural === EndpointSliceKind.plural && kind.group === EndpointSliceKind.group && label === 'kubernetes.io/service-name') {
        return cache.store(kind).byIndex(SERVICE_SLICES_INDEX, `${namespace}/${value}`);
      }
      return cache.store(kind).list(namespace).filter((o: KubeObject) => o.metadata.labels?.[label] === value);
    },
    // Only the Events in the object's namespace, as the CLI's reader: an Event may regard an object
    // of another namespace, and whoever can write Events in that one must not write on this panel.
    eventsRegarding: async (namespace, uids) => {
      const store = cache.store(EventKind);
      return uids.filter(Boolean).flatMap((uid) => store.byIndex(REGARDING_UID_INDEX, uid).filter((e) => e.metadata.namespace === namespace));
    },
    secretPresence: async () => ({ secretExists: null, keyPresent: null, error: SECRETS_NOT_READ }),
  };
}
