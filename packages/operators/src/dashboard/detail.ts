/**
 * One object in full, for `GET /api/v1/{kind}/{cluster}/{namespace}/{name}` and the page's
 * detail view: its row, what `converge explain` says (computed by the same pure functions, from
 * this dashboard's cache: no request), the condition timeline since the dashboard started, and
 * the object as YAML — with what `converge explain` and the operator's logs hide hidden here too:
 * a Microservice's plain env values (one may be a password, ADR 0031) and the
 * `last-applied-configuration` annotation that repeats them. Anyone with the dashboard's token
 * reads this, with no Kubernetes access of their own.
 * @module
 */
import * as YAML from 'yaml';
import { printYaml } from '../cli/shared/printed-yaml.ts';
import type { KubeObject } from '@converge/runtime';
import { defaultPlatformDefaults } from '../operators/microservice/index.ts';
import { explainMicroservice } from '../cli/views/explain-microservice.ts';
import { explainProvider } from '../cli/views/explain-provider.ts';
import { gatherMicroserviceFacts, gatherProviderFacts } from '../cli/shared/explain-facts.ts';
import { cacheReader } from './cache-reader.ts';
import type { ClusterSource } from './cluster-source.ts';
import type { DashboardModel } from './model.ts';
import { itemKey } from './items.ts';
import { DASHBOARD_API_VERSION } from './shared/types.ts';
import type { ItemKind, ObjectDetail } from './shared/types.ts';

export async function objectDetail(model: DashboardModel, source: ClusterSource, kind: ItemKind, namespace: string, name: string): Promise<ObjectDetail | undefined> {
  const entry = model.get(itemKey(kind, source.name, namespace, name));
  if (!entry) return undefined;
  const view = source.view();
  const reader = cacheReader(source.cache, (kind) => {
    if (!(view.unreadableKinds ?? []).includes(kind)) return undefined;
    const warning = view.warnings.find((w) => w.startsWith(`${kind}: `));
    return `the dashboard cannot read ${kind}s now${warning ? ` (${warning.slice(kind.length + 2)})` : ''}`;
  });
  const explanation = kind === 'Microservice'
    ? await gatherMicroserviceFacts(reader, namespace, name, { defaults: defaultPlatformDefaults, defaultsSource: 'built-in platform defaults' }).then((f) => f && explainMicroservice(f))
    : await gatherProviderFacts(reader, namespace, name).then((f) => f && explainProvider(f));
  if (!explanation) return undefined;
  return {
    apiVersion: DASHBOARD_API_VERSION,
    kind: 'ObjectDetail',
    item: entry.item,
    explanation,
    timeline: entry.timeline,
    yaml: printYaml(YAML, shown(entry.object)),
  };
}

const HIDDEN = '(value hidden)';
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** The object as the detail shows it (see the module header); the cached object is not changed. */
function shown(object: KubeObject): KubeObject {
  const copy = structuredClone(object) as KubeObject & { spec?: { container?: { env?: { value?: string }[] } } };
  for (const e of copy.spec?.container?.env ?? []) if (e.value !== undefined) e.value = HIDDEN;
  if (copy.metadata.annotations?.[LAST_APPLIED] !== undefined) copy.metadata.annotations[LAST_APPLIED] = HIDDEN;
  return copy;
}
