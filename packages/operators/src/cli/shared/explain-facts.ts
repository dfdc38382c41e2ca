/**
 * What `converge explain` reads, gathered once for every reader: the object, its same-named
 * Deployment and Service, their EndpointSlices, the Deployment's pods (at most `POD_SAMPLE`, from
 * readers that can list them), the Events regarding any of them, and whether
 * a provider's credentials Secret and key exist. `converge explain` reads through the API server
 * (`clientReader`); the dashboard reads through its informer cache (`dashboard/cache-reader.ts`).
 * Both hand the facts to the same pure `explainMicroservice` / `explainProvider`.
 *
 * Guarantees: Secret values never leave a reader — `secretPresence` returns booleans only.
 * @module
 */
import { ApiError, EventKind, SecretKind, DeploymentKind, ServiceKind, EndpointSliceKind, PodKind, isNotFound } from '@converge/runtime';
import type { KubeClient, KubeEvent, KubeObject, Pod, ResourceKind } from '@converge/runtime';
import { MicroserviceKind } from '../../operators/microservice/api/kind.ts';
import { DigitalHumanProviderKind } from '../../operators/provider/api/kind.ts';
import type { PlatformDefaults } from '../../operators/microservice/index.ts';
import { DEFAULT_CREDENTIALS_KEY, optedInForVendor } from '../../operators/provider/api/constants.ts';
import type { MicroserviceFacts } from '../views/explain-microservice.ts';
import type { ProviderFacts } from '../views/explain-provider.ts';

export type SecretPresence = ProviderFacts['credentials'];

/** Where the facts come from. Every method resolves; "not there" is `undefined` / `[]`. */
export interface ObjectReader {
  get<T extends KubeObject>(kind: ResourceKind<T>, namespace: string, name: string): Promise<T | undefined>;
  /** Objects of a namespace whose label `label` equals `value`. */
  listLabelled<T extends KubeObject>(kind: ResourceKind<T>, namespace: string, label: string, value: string): Promise<T[]>;
  /** Events (events.k8s.io/v1) in `namespace` regarding any of `uids` (an Event elsewhere that regards them does not count). */
  eventsRegarding(namespace: string, uids: readonly string[]): Promise<KubeEvent[]>;
  /** Whether the Secret and its key exist; never the values. */
  secretPresence(namespace: string, name: string, key: string): Promise<SecretPresence>;
  /**
   * Why this reader cannot read `kind` now (its watch refused: RBAC revoked, a CRD gone), if it
   * cannot: what it holds of that kind is what it last saw, and an object missing may exist.
   */
  unreadable?(kind: ResourceKind): string | undefined;
  /** Up to `limit` pods of a namespace matching all of `labels`; a reader without pods leaves it out. */
  podsMatching?(namespace: string, labels: Readonly<Record<string, string>>, limit: number): Promise<Pod[]>;
}

/** Pods read to say why a rollout does not progress: enough to name the causes, bounded for a large Deployment. */
export const POD_SAMPLE = 50;

export interface MicroserviceFactOptions {
  defaults: PlatformDefaults;
  /** Where `defaults` came from, e.g. `built-in platform defaults`. */
  defaultsSource: string;
}

export async function gatherMicroserviceFacts(reader: ObjectReader, namespace: string, name: string, options: MicroserviceFactOptions): Promise<MicroserviceFacts | undefined> {
  const microservice = await reader.get(MicroserviceKind, namespace, name);
  if (!microservice) return undefined;
  const [deployment, service, endpointSlices] = await Promise.all([
    reader.get(DeploymentKind, namespace, name),
    reader.get(ServiceKind, namespace, name),
    reader.listLabelled(EndpointSliceKind, namespace, 'kubernetes.io/service-name', name),
  ]);
  const uids = [microservice, deployment, service].filter((o): o is NonNullable<typeof o> => o !== undefined).map((o: KubeObject) => o.metadata.uid ?? '');
  const selector = deployment?.spec?.selector?.matchLabels;
  let podsUnreadable: string | undefined;
  const [events, pods] = await Promise.all([
    reader.eventsRegarding(namespace, uids),
    selector && Object.keys(selector).length > 0 && reader.podsMatching
      ? reader.podsMatching(namespace, selector, POD_SAMPLE).catch((err: unknown) => {
        // A sample that helps, not a requirement: a reader may not be allowed to list pods.
        if (!(err instanceof ApiError) || err.code !== 403) throw err;
        podsUnreadable = err.message;
        return undefined;
      })
      : undefined,
  ]);
  const eventsUnreadable = reader.unreadable?.(EventKind);
  const unreadable = Object.fromEntries(
    ([['Deployment', DeploymentKind], ['Service', ServiceKind], ['EndpointSlice', EndpointSliceKind]] as const)
      .map(([k, kind]) => [k, reader.unreadable?.(kind)] as const)
      .filter((e): e is readonly ['Deployment' | 'Service' | 'EndpointSlice', string] => e[1] !== undefined),
  );
  return {
    microservice, deployment, service, endpointSlices, events,
    ...(Object.keys(unreadable).length > 0 ? { unreadable } : {}),
    ...(pods ? { pods } : {}),
    ...(podsUnreadable ? { podsUnreadable } : {}),
    ...(eventsUnreadable ? { eventsUnreadable } : {}),
    defaults: options.defaults, defaultsSource: options.defaultsSource,
  };
}

export async function gatherProviderFacts(reader: ObjectReader, namespace: string, name: string): Promise<ProviderFacts | undefined> {
  const provider = await reader.get(DigitalHumanProviderKind, namespace, name);
  if (!provider) return undefined;
  const ref = provider.spec?.credentials?.secretRef;
  const credentials: SecretPresence = ref?.name
    ? await reader.secretPresence(namespace, ref.name, ref.key ?? DEFAULT_CREDENTIALS_KEY)
    : { secretExists: false, keyPresent: null };
  const events = await reader.eventsRegarding(namespace, [provider.metadata.uid ?? '']);
  const eventsUnreadable = reader.unreadable?.(EventKind);
  return { provider, credentials, events, ...(eventsUnreadable ? { eventsUnreadable } : {}) };
}

async function getOrUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * Reads straight from the API server. Events are asked for with the field selector
 * `regarding.uid`; an API server that refuses it (400) gets a namespace list filtered here.
 * API errors other than 404 reject (the caller reports them), except: reading the Secret, whose
 * failure is reported in the presence (`secretExists: null`); and a kind other than the object
 * explained that the caller may not read (403: an app team allowed to read its Microservices and
 * nothing else), which reads as nothing and is named by `unreadable` — the explanation then says
 * it cannot tell rather than that a child is missing.
 */
export function clientReader(client: KubeClient): ObjectReader {
  const refused = new Map<string, string>();
  /** `read`, with a 403 for a kind other than the one explained remembered and read as `none`. */
  const unlessForbidden = async <R>(kind: ResourceKind, read: () => Promise<R>, none: R): Promise<R> => {
    try {
      return await read();
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== 403 || kind === (MicroserviceKind as ResourceKind) || kind === (DigitalHumanProviderKind as ResourceKind)) throw err;
      refused.set(kind.kind, err.message);
      return none;
    }
  };
  return {
    unreadable: (kind) => refused.get(kind.kind),
    get: (kind, namespace, name) => unlessForbidden(kind, () => getOrUndefined(() => client.get(kind, { namespace, name })), undefined),
    listLabelled: (kind, namespace, label, value) => unlessForbidden(kind, async () => (await client.listAll(kind, { namespace, labelSelector: `${label}=${value}` })).items, []),
    podsMatching: async (namespace, labels, limit) =>
      (await client.list(PodKind, { namespace, labelSelector: Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(','), limit })).items,
    eventsRegarding: (namespace, uids) => unlessForbidden(EventKind, () => eventsRegarding(client, namespace, uids), []),
    secretPresence: async (namespace, name, key) => {
      try {
        // Only the presence of the Secret and of its key leaves this block; the data is dropped here.
        const secret = await getOrUndefined(() => client.get(SecretKind, { namespace, name }));
        return secret
          ? { secretExists: true, keyPresent: Object.hasOwn(secret.data ?? {}, key) || Object.hasOwn(secret.stringData ?? {}, key), labelled: optedInForVendor(secret) }
          : { secretExists: false, keyPresent: null };
      } catch (err) {
        return { secretExists: null, keyPresent: null, error: err instanceof ApiError && err.code === 403 ? 'not allowed to read Secrets' : (err as Error).message };
      }
    },
  };
}

/** Events in `namespace` regarding any of `uids` (see `clientReader`). */
async function eventsRegarding(client: KubeClient, namespace: string, uids: readonly string[]): Promise<KubeEvent[]> {
  const wanted = uids.filter(Boolean);
  try {
    const lists = await Promise.all(wanted.map((uid) => client.listAll(EventKind, { namespace, fieldSelector: `regarding.uid=${uid}` })));
    return lists.flatMap((l) => l.items);
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== 400) throw err;
    const { items } = await client.listAll(EventKind, { namespace });
    return items.filter((e) => e.regarding?.uid && wanted.includes(e.regarding.uid));
  }
}
