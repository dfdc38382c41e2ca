/**
 * fast-check arbitraries for what an API server can really return to `converge status`,
 * `converge explain` and the dashboard, shared by `views.property.test.ts` (CLI views) and
 * `dashboard/views.property.test.ts` (the dashboard's builders). Test support only (not packed).
 *
 * Objects are what the API server stores and serves: Microservices and DigitalHumanProviders whose
 * spec passes their CRD schemas (DNS-1035 / DNS-subdomain names up to 63 / 253 characters, valid
 * images, ports and regions) and whose status is anything the status schemas let through, or less
 * (every field optional, as after pruning or from an older operator): no conditions or an empty
 * list, conditions of unknown types, reasons and messages, observedGeneration absent, behind, equal
 * or ahead of metadata.generation, messages up to the schemas' 32 768 characters, dates from year 1
 * to 9999 (also unparseable ones, where the API server does not check them), deletionTimestamp set,
 * up to 40 finalizers. Deployments, Services, EndpointSlices (`endpoints: null` included), Pods and
 * Events (events.k8s.io/v1, and core Events as events.k8s.io serves them: `eventTime: null`,
 * `deprecated*` fields) with partial or absent status and counts of 0 or 10^6.
 *
 * Free text (messages, notes, reasons where nothing validates them, provider IDs, display names,
 * owner references, annotations, images of Deployments) mixes hostile pieces: ESC sequences (CSI,
 * OSC 52, OSC 0), C0 and C1 controls, DEL, `\r`, `\t`, `\n`, U+2028/U+2029, bidi controls, RTL
 * text, combining marks, emoji (ZWJ sequences, flags), zero-width characters. Strings are always
 * well-formed UTF-16: the API server sends UTF-8 JSON.
 * @module
 */
import fc from 'fast-check';
import type { Condition, Deployment, EndpointSlice, KubeEvent, Pod, Service } from '@converge/runtime';
import type { Microservice } from '../../operators/microservice/api/index.ts';
import type { DigitalHumanProvider } from '../../operators/provider/api/index.ts';
import { GENERATION_ANNOTATION, HANDOVER_ANNOTATION, MICROSERVICE_API_VERSION, MICROSERVICE_KIND } from '../../operators/microservice/api/constants.ts';
import { ABANDON_ANNOTATION, PROVIDER_API_VERSION, PROVIDER_FINALIZER, PROVIDER_KIND } from '../../operators/provider/api/constants.ts';
import { renderDesiredState } from '../../operators/microservice/desired-state.ts';
import { defaultPlatformDefaults } from '../../operators/microservice/platform-defaults.ts';

// ---------------------------------------------------------------------------------------------
// Text

/** Pieces that a terminal, a log line or a bidi algorithm would act on, and text of every script. */
export const NASTY: readonly string[] = [
  '\u001b[2J', '\u001b[H', '\u001b[31m', '\u001b]52;c;cm0gLXJmIH4=\u0007', '\u001b]0;pwned\u001b\\', '\u001bP+q\u001b\\', '\u001b',
  '\u009b2K', '\u0090', '\u0085', '\u007f', '\u0000', '\u0007', '\u0008', '\u000b', '\u000c',
  '\r', '\n', '\r\n', '\t', '\u2028', '\u2029',
  '\u200b', '\u200c', '\u200d', '\ufeff', '\u00ad', '\u200e', '\u200f', '\u061c', '\u202a', '\u202b', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069',
  'مرحبا بالعالم', 'שלום', '\u0627\u0644\u0639\u0631\u0628\u064a\u0629', 'e\u0301', 'Z\u0351\u0352\u0353\u0354\u0355\u0356\u0357', '\u0e01\u0e34\u0e4a',
  '👩‍👩‍👧‍👦', '🇯🇵', '👍🏽', '😀', '漢字', 'ｆｕｌｌ', '\ud834\udd1e', '%s%n', '{{.}}', '\\u001b', '…', ' ', '  ',
];

const wellFormed = (s: string) => s.toWellFormed();

/** Free text as anyone who can write an object, its status or an Event can put there. */
export const textArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 24 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }).map(wellFormed) },
  { weight: 4, arbitrary: fc.array(fc.oneof(fc.constantFrom(...NASTY), fc.string({ maxLength: 6 })), { maxLength: 8 }).map((a) => a.join('')) },
);

/** Text up to `max` UTF-16 units, sometimes repeated up to that bound (a 32 KiB message). */
export function longTextArb(max: number): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: textArb.map((s) => cutTo(s, max)) },
    {
      weight: 1,
      arbitrary: fc.tuple(textArb, fc.integer({ min: 1, max: 4_000 })).map(([s, n]) => (s === '' ? 'x'.repeat(Math.min(max, n)) : cutTo(s.repeat(Math.ceil(Math.min(max, n * s.length) / s.length)), max))),
    },
  );
}

/** At most `max` UTF-16 units, never cutting a surrogate pair. */
export function cutTo(s: string, max: number): string {
  if (s.length <= max) return s;
  let out = s.slice(0, max);
  if (/[\ud800-\udbff]$/.test(out)) out = out.slice(0, -1);
  return out;
}

/** A condition reason: known, valid by the metav1.Condition pattern, or (pruned or older data) anything. */
export const reasonArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('Available', 'RolloutInProgress', 'RolloutStalled', 'InvalidSpec', 'OwnershipConflict', 'ApplyRejected', 'EndpointsNotReady', 'ScaledToZero', 'ProviderReady', 'ProviderDegraded', 'VendorRejected', 'DeletionBlocked', 'CredentialsMissing', 'QuotaExhausted', 'RateLimited', 'AccountSuspended') },
  { weight: 2, arbitrary: fc.stringMatching(/^[A-Za-z]([A-Za-z0-9_,:]{0,40}[A-Za-z0-9_])?$/) },
  { weight: 1, arbitrary: fc.constantFrom('x'.repeat(1024), `A${'b:'.repeat(500)}c`) },
  { weight: 1, arbitrary: textArb },
);

export const conditionTypeArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('Ready', 'Progressing', 'Stalled', 'Reconciling', 'QuotaExhausted', 'RateLimited', 'AccountSuspended', 'ScaleRecommended') },
  { weight: 1, arbitrary: fc.constantFrom('example.com/Custom', 'Degraded', 'ready', 'READY', 'Ready2', `${'a'.repeat(253)}/${'B'.repeat(62)}`) },
  { weight: 1, arbitrary: textArb.filter((s) => s !== '') },
);

// ---------------------------------------------------------------------------------------------
// Names, numbers, dates

const label = (max: number) => fc.stringMatching(new RegExp(`^[a-z]([-a-z0-9]{0,${max - 2}}[a-z0-9])?$`));
/** A DNS-1035 label of at most 63 characters (Microservice names, namespaces). */
export const dns1035Arb: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: label(20) },
  { weight: 1, arbitrary: fc.constantFrom('a', `a${'-b'.repeat(31)}`, `z${'9'.repeat(62)}`) },
);
/** A DNS subdomain of at most 253 characters (DigitalHumanProvider names). */
export const subdomainArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.array(label(20), { minLength: 1, maxLength: 4 }).map((l) => l.join('.')) },
  { weight: 1, arbitrary: fc.constantFrom(`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`, `${'x'.repeat(252)}y`) },
);
const qualifiedNameArb = fc.oneof(fc.constantFrom(PROVIDER_FINALIZER, 'kubernetes', 'foregroundDeletion', 'orphan'), fc.tuple(subdomainArb, dns1035Arb).map(([d, n]) => `${d.slice(0, 200)}/${n}`));

/** Counts: zero, small, 10^6, the int32 edge. */
export const countArb: fc.Arbitrary<number> = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 5 }) },
  { weight: 1, arbitrary: fc.constantFrom(0, 1_000_000, 2 ** 31 - 1) },
  { weight: 1, arbitrary: fc.nat() },
);

export const uidArb: fc.Arbitrary<string> = fc.oneof({ weight: 5, arbitrary: fc.uuid() }, { weight: 1, arbitrary: fc.constantFrom('uid-a', 'uid-b') });

/** The reference instant the generated dates cluster around. */
export const BASE_MS = Date.UTC(2026, 0, 1);
const YEAR_MS = 365 * 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

/** RFC 3339 dates the API server accepts (format date-time): near BASE_MS, year 1, the epoch, year 9999, offsets, nanoseconds. */
export const dateArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -3 * 86_400_000, max: 3 * 86_400_000 }).map((off) => iso(BASE_MS + off)) },
  { weight: 2, arbitrary: fc.integer({ min: -30 * YEAR_MS, max: 30 * YEAR_MS }).map((off) => iso(BASE_MS + off)) },
  { weight: 1, arbitrary: fc.constantFrom('1970-01-01T00:00:00Z', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '2026-01-01T09:00:00+09:00', '2025-12-31T19:00:00-05:00', '2026-01-01T00:00:00.123456789Z', '2026-01-01T00:00:00.5Z') },
);
/** Where nothing validates the format (or in data from before a schema): also unparseable text. */
export const looseDateArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: dateArb },
  { weight: 1, arbitrary: fc.constantFrom('', 'garbage', 'null', '2026-13-45T99:99:99Z', '+275760-09-13T00:00:00.001Z', '-271821-04-19T00:00:00Z', '1e999', '2026-01-01T00:00:00Z\u001b[2J') },
);
/** A clock around the objects' dates: before them (skew), at them, long after them. */
export const nowArb: fc.Arbitrary<Date> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: -3 * 86_400_000, max: 3 * 86_400_000 }) },
  { weight: 1, arbitrary: fc.integer({ min: -40 * YEAR_MS, max: 40 * YEAR_MS }) },
  { weight: 1, arbitrary: fc.constantFrom(0, -1, 1, 999, 1000, 119_999, 120_000) },
).map((off) => new Date(BASE_MS + off));

/** A generation: metadata.generation (>= 1) and int64-sized values. */
const generationArb = fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 1, max: 6 }) }, { weight: 1, arbitrary: fc.constantFrom(2 ** 31, Number.MAX_SAFE_INTEGER) });
/** status.observedGeneration relative to `generation`: absent, behind, equal, ahead, 0, huge. */
function observedArb(generation: number): fc.Arbitrary<number | undefined> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(generation) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom(Math.max(0, generation - 1), 0, generation + 1, Number.MAX_SAFE_INTEGER) },
  );
}

/** `arb`, or undefined once in `weight + 1` times. */
const opt = <T>(arb: fc.Arbitrary<T>, weight = 1) => fc.option(arb, { nil: undefined, freq: weight + 1 });
/** `arb` once in five times, else undefined. */
const rarely = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });

/** Drops keys whose value is undefined: JSON from the API server has no undefined. */
export function clean<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

// ---------------------------------------------------------------------------------------------
// Conditions

/** A generated condition: the runtime's `Condition` (metav1.Condition). */
export type GeneratedCondition = Condition;

export function conditionsArb(generation: number, types: fc.Arbitrary<string> = conditionTypeArb): fc.Arbitrary<GeneratedCondition[] | undefined> {
  const one = fc.record({
    type: types,
    status: fc.constantFrom('True' as const, 'False' as const, 'Unknown' as const),
    reason: reasonArb,
    message: longTextArb(32_768),
    observedGeneration: observedArb(generation),
    lastTransitionTime: looseDateArb,
  }).map((c) => clean(c) as GeneratedCondition);
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constant([] as GeneratedCondition[]) },
    // A list-map keyed by type: the API server keeps one condition per type.
    { weight: 6, arbitrary: fc.uniqueArray(one, { maxLength: 10, selector: (c) => c.type }) },
  );
}

/** The conditions of a converged object, as its operator writes them (so converged objects are generated too). */
function healthyConditions(generation: number, reason: string, types: readonly string[]): fc.Arbitrary<GeneratedCondition[]> {
  return fc.record({ message: longTextArb(256), lastTransitionTime: dateArb }).map(({ message, lastTransitionTime }) =>
    types.map((type) => ({ type, status: type === 'Ready' ? 'True' as const : 'False' as const, reason: type === 'Ready' ? reason : 'AsExpected', message, observedGeneration: generation, lastTransitionTime })),
  );
}

// ---------------------------------------------------------------------------------------------
// Microservices and DigitalHumanProviders

const imageArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('ghcr.io/yrw9281/it30-todo-api:0.1.0', 'nginx', 'localhost:5000/a/b:latest', `registry.example.com/app@sha256:${'a'.repeat(64)}`) },
  { weight: 1, arbitrary: fc.tuple(label(40), fc.stringMatching(/^[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127}$/)).map(([r, t]) => `example.com/${r}:${t}`) },
  { weight: 1, arbitrary: fc.constant(`${'a'.repeat(255)}:${'t'.repeat(128)}@sha512:${'f'.repeat(128)}`.slice(0, 512)) },
);
/** Stored before the schema checked it (the operator checks again and refuses it: InvalidSpec). */
const legacyImageArb = fc.oneof({ weight: 12, arbitrary: imageArb }, { weight: 1, arbitrary: fc.constantFrom('UPPER/Case:1', 'a b', 'x@sha256:short') });

function metadataArb(name: fc.Arbitrary<string>) {
  return generationArb.chain((generation) =>
    fc.record({
      name,
      namespace: dns1035Arb,
      uid: uidArb,
      generation: fc.constant(generation),
      resourceVersion: fc.nat().map(String),
      creationTimestamp: opt(dateArb, 8),
      deletionTimestamp: rarely(dateArb),
      finalizers: fc.oneof(opt(fc.array(qualifiedNameArb, { maxLength: 40 }), 2), fc.constant([PROVIDER_FINALIZER])),
      annotations: opt(fc.dictionary(fc.constantFrom(ABANDON_ANNOTATION, 'note.example.com/x', 'kubectl.kubernetes.io/last-applied-configuration'), longTextArb(2048), { maxKeys: 2 })),
    }, { requiredKeys: ['name', 'namespace', 'uid', 'generation', 'resourceVersion'] }),
  );
}

export const microserviceArb: fc.Arbitrary<Microservice> = metadataArb(dns1035Arb).chain((metadata) =>
  fc.record({
    apiVersion: fc.constant(MICROSERVICE_API_VERSION),
    kind: fc.constant(MICROSERVICE_KIND),
    metadata: fc.constant(metadata),
    spec: fc.record({
      container: fc.record({
        image: legacyImageArb,
        port: fc.oneof(fc.constantFrom(1, 80, 8080, 65535), fc.integer({ min: 1, max: 65535 })),
        env: opt(fc.uniqueArray(fc.record({ name: fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,10}$/), value: textArb }), { maxLength: 4, selector: (e) => e.name })),
      }, { requiredKeys: ['image', 'port'] }),
      replicas: opt(fc.oneof(fc.constantFrom(0, 1, 100), fc.integer({ min: 0, max: 100 }))),
    }, { requiredKeys: ['container'] }),
    status: opt(
      fc.record({
        phase: opt(fc.constantFrom('Accepted' as const, 'ResourcesApplied' as const, 'Failed' as const), 3),
        observedGeneration: observedArb(metadata.generation),
        conditions: fc.oneof(conditionsArb(metadata.generation), healthyConditions(metadata.generation, 'Available', ['Ready', 'Progressing', 'Stalled'])),
        managedResources: opt(fc.record({ deployment: opt(fc.oneof(fc.constant(metadata.name), textArb)), service: opt(fc.oneof(fc.constant(metadata.name), textArb)) })),
        rollout: opt(fc.record({ replicas: countArb, updatedReplicas: countArb, availableReplicas: countArb, readyEndpoints: countArb }), 2),
        reason: opt(fc.oneof(reasonArb, longTextArb(1024)), 2),
        message: opt(longTextArb(32_768), 2),
      }, { requiredKeys: ['observedGeneration', 'conditions'] }),
      6,
    ),
  }, { requiredKeys: ['apiVersion', 'kind', 'metadata', 'spec'] }).map((ms) => clean(ms) as Microservice),
);

const usageArb = fc.record({
  callsToday: countArb,
  dailyQuota: countArb,
  quotaRemaining: countArb,
  throttledRequests: countArb,
  throttleWindowSeconds: countArb,
  quotaResetAt: dateArb,
  observedAt: dateArb,
// Figures past the three the table shows may be missing: a cluster whose CRD does not require
// them (another version of the operator; the views read any cluster the kubeconfig names).
}, { requiredKeys: ['callsToday', 'dailyQuota', 'quotaRemaining'] });
const limitsArb = fc.record({ maxConcurrency: countArb, requestsPerMinute: countArb, dailyQuota: countArb });

export const providerArb: fc.Arbitrary<DigitalHumanProvider> = metadataArb(subdomainArb).chain((metadata) =>
  fc.record({
    apiVersion: fc.constant(PROVIDER_API_VERSION),
    kind: fc.constant(PROVIDER_KIND),
    metadata: fc.constant(metadata),
    spec: fc.record({
      endpoint: fc.oneof(fc.constantFrom('https://127.0.0.1:8443', 'https://api.vendor.example'), textArb.map((t) => `https://${t}`)),
      region: fc.oneof(fc.constantFrom('ap-northeast-1', 'eu', '0'), fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/)),
      displayName: opt(longTextArb(256)),
      credentials: fc.record({ secretRef: fc.record({ name: subdomainArb, key: opt(fc.stringMatching(/^[-._a-zA-Z0-9]{1,20}$/)) }, { requiredKeys: ['name'] }) }),
      limits: opt(fc.record({ maxConcurrency: fc.integer({ min: 1, max: 10_000 }), requestsPerMinute: fc.integer({ min: 1, max: 1_000_000 }), dailyQuota: fc.integer({ min: 1, max: 1_000_000_000 }) }, { requiredKeys: [] })),
    }, { requiredKeys: ['endpoint', 'region', 'credentials'] }),
    status: opt(
      fc.record({
        observedGeneration: observedArb(metadata.generation),
        providerID: opt(fc.oneof(fc.constant(''), fc.uuid(), longTextArb(256)), 2),
        instanceEndpoint: opt(fc.oneof(fc.constant('https://api.vendor.example'), longTextArb(2048))),
        createRequestedAt: opt(dateArb),
        conditions: fc.oneof(conditionsArb(metadata.generation), healthyConditions(metadata.generation, 'ProviderReady', ['Ready', 'QuotaExhausted', 'RateLimited'])),
        usage: opt(usageArb, 2),
        limits: opt(limitsArb),
        limitedBy: opt(fc.oneof(reasonArb, longTextArb(64)).map((s) => cutTo(s, 64))),
        usable: opt(fc.boolean()),
        recommendation: opt(longTextArb(1024)),
      }, { requiredKeys: ['observedGeneration', 'conditions', 'providerID'] }),
      6,
    ),
  }, { requiredKeys: ['apiVersion', 'kind', 'metadata', 'spec'] }).map((p) => clean(p) as DigitalHumanProvider),
);

// ---------------------------------------------------------------------------------------------
// Children, endpoints, pods, events

type OwnerChoice = 'controller' | 'none' | 'previous' | 'foreign' | 'several';
function ownerReferences(ms: Microservice, choice: OwnerChoice, hostile: string) {
  const mine = { apiVersion: MICROSERVICE_API_VERSION, kind: MICROSERVICE_KIND, name: ms.metadata.name!, uid: ms.metadata.uid!, controller: true, blockOwnerDeletion: true };
  switch (choice) {
    case 'controller': return [mine];
    case 'none': return undefined;
    case 'previous': return [{ ...mine, uid: 'an-earlier-uid' }];
    case 'foreign': return [{ apiVersion: 'apps/v1', kind: hostile || 'ReplicaSet', name: hostile || 'other', uid: 'foreign-uid', controller: true }];
    case 'several': return [{ apiVersion: 'v1', kind: 'ConfigMap', name: hostile || 'cm', uid: 'cm-uid' }, mine];
  }
}

const ownerChoiceArb = fc.constantFrom<OwnerChoice>('controller', 'controller', 'controller', 'none', 'previous', 'foreign', 'several');

const deploymentConditionArb = fc.record({
  type: fc.oneof(fc.constantFrom('Progressing', 'Available', 'ReplicaFailure'), textArb),
  status: fc.constantFrom('True', 'False', 'Unknown'),
  reason: opt(fc.oneof(fc.constantFrom('ProgressDeadlineExceeded', 'NewReplicaSetAvailable', 'ReplicaSetUpdated'), textArb), 4),
  message: opt(longTextArb(4096), 4),
  lastUpdateTime: opt(looseDateArb),
  lastTransitionTime: opt(looseDateArb),
}, { requiredKeys: ['type', 'status'] });

/** What the operator would render for `ms` with the default platform settings; undefined for a spec it refuses. */
function renderedFor(ms: Microservice): ReturnType<typeof renderDesiredState> | undefined {
  try {
    return renderDesiredState(ms, defaultPlatformDefaults);
  } catch {
    return undefined;
  }
}

/** A Deployment named like `ms`: absent, rendered as the operator would (then drifted), or odd. */
export function deploymentArb(ms: Microservice): fc.Arbitrary<Deployment | undefined> {
  const desired = renderedFor(ms)?.deployment;
  const status = opt(fc.record({
    observedGeneration: opt(generationArb, 4),
    replicas: opt(countArb, 3),
    updatedReplicas: opt(countArb, 3),
    readyReplicas: opt(countArb, 3),
    availableReplicas: opt(countArb, 3),
    unavailableReplicas: opt(countArb, 3),
    conditions: opt(fc.array(deploymentConditionArb, { maxLength: 4 }), 3),
  }, { requiredKeys: [] }), 4);
  const base = fc.record({
    owner: ownerChoiceArb,
    hostile: textArb,
    uid: uidArb,
    generation: opt(generationArb, 4),
    stamp: opt(fc.oneof({ weight: 4, arbitrary: fc.constant(String(ms.metadata.generation)) }, { weight: 1, arbitrary: fc.constant('0') }, { weight: 1, arbitrary: textArb }), 4),
    handover: opt(fc.oneof(fc.constant(ms.metadata.name!), textArb)),
    replicas: opt(fc.oneof(fc.constantFrom(0, 1, 2, 1_000_000), countArb), 3),
    progressDeadlineSeconds: opt(fc.constantFrom(600, 0, 2 ** 31 - 1)),
    images: opt(fc.array(fc.oneof(imageArb, textArb), { maxLength: 3 }), 3),
    status,
    asDesired: fc.constantFrom(true, true, true, false),
  });
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    {
      weight: 5,
      arbitrary: base.map((b) => {
        const metadata = {
          ...(b.asDesired && desired ? desired.metadata : {}),
          name: ms.metadata.name,
          namespace: ms.metadata.namespace,
          uid: b.uid,
          ...(b.generation !== undefined ? { generation: b.generation } : {}),
          annotations: { ...(b.stamp !== undefined ? { [GENERATION_ANNOTATION]: b.stamp } : {}), ...(b.handover !== undefined ? { [HANDOVER_ANNOTATION]: b.handover } : {}) },
          ownerReferences: ownerReferences(ms, b.owner, b.hostile),
        };
        const spec = b.asDesired && desired
          ? desired.spec
          : {
              ...(b.replicas !== undefined ? { replicas: b.replicas } : {}),
              ...(b.progressDeadlineSeconds !== undefined ? { progressDeadlineSeconds: b.progressDeadlineSeconds } : {}),
              selector: { matchLabels: { app: ms.metadata.name! } },
              template: { spec: { containers: (b.images ?? []).map((image, i) => ({ name: `c${i}`, image })) } },
            };
        return clean({ apiVersion: 'apps/v1', kind: 'Deployment', metadata, spec, ...(b.status ? { status: b.status } : {}) }) as Deployment;
      }),
    },
  );
}

export function serviceArb(ms: Microservice): fc.Arbitrary<Service | undefined> {
  const desired = renderedFor(ms)?.service;
  const port = fc.record({
    name: opt(fc.oneof(fc.constant('http'), textArb)),
    port: fc.integer({ min: 1, max: 65535 }),
    targetPort: opt(fc.oneof(fc.integer({ min: 1, max: 65535 }), fc.constant('http'), textArb)),
    protocol: opt(fc.constantFrom('TCP', 'UDP', 'SCTP')),
  }, { requiredKeys: ['port'] });
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    {
      weight: 4,
      arbitrary: fc.record({ owner: ownerChoiceArb, hostile: textArb, uid: uidArb, asDesired: fc.constantFrom(true, true, true, false), type: opt(fc.constantFrom('ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName')), clusterIP: opt(fc.constantFrom('10.0.0.1', 'None', '', 'fd00::1')), ports: opt(fc.array(port, { maxLength: 3 }), 3), selector: opt(fc.dictionary(fc.constantFrom('app', 'x'), textArb)) }).map((b) => {
        const metadata = { ...(b.asDesired && desired ? desired.metadata : {}), name: ms.metadata.name, namespace: ms.metadata.namespace, uid: b.uid, ownerReferences: ownerReferences(ms, b.owner, b.hostile) };
        const spec = b.asDesired && desired ? { ...desired.spec, clusterIP: b.clusterIP ?? '10.0.0.9' } : { type: b.type, clusterIP: b.clusterIP, ports: b.ports, selector: b.selector };
        return clean({ apiVersion: 'v1', kind: 'Service', metadata, spec }) as Service;
      }),
    },
  );
}

export function endpointSlicesArb(ms: Microservice): fc.Arbitrary<EndpointSlice[]> {
  const endpoint = fc.record({
    addresses: fc.oneof(fc.constant([]), fc.array(fc.constantFrom('10.0.0.1', '10.0.0.2', 'fd00::1'), { minLength: 1, maxLength: 2 })),
    conditions: opt(fc.record({ ready: opt(fc.oneof(fc.boolean(), fc.constant(null)), 3), serving: opt(fc.boolean()), terminating: opt(fc.boolean()) }, { requiredKeys: [] }), 4),
    hostname: opt(fc.constantFrom('h1', 'h2')),
    targetRef: opt(fc.record({ kind: opt(fc.constant('Pod')), name: opt(fc.constantFrom('p1', 'p2', 'p3')), uid: opt(fc.constantFrom('pu1', 'pu2', 'pu3')) }, { requiredKeys: [] }), 3),
  }, { requiredKeys: ['addresses'] });
  const slice = fc.record({
    name: fc.string({ maxLength: 5 }),
    addressType: fc.constantFrom('IPv4', 'IPv6'),
    endpoints: fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 4, arbitrary: fc.array(endpoint, { maxLength: 6 }) }),
  });
  return fc.array(slice, { maxLength: 4 }).map((slices) =>
    slices.map((s, i) => clean({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: `${ms.metadata.name}-${i}`, namespace: ms.metadata.namespace, labels: { 'kubernetes.io/service-name': ms.metadata.name! } }, addressType: s.addressType, endpoints: s.endpoints }) as unknown as EndpointSlice),
  );
}

const containerStatusArb = fc.record({
  name: fc.oneof(fc.constant('app'), textArb),
  ready: fc.boolean(),
  restartCount: countArb,
  image: fc.oneof(imageArb, textArb),
  imageID: fc.constant(''),
  state: opt(fc.oneof(
    fc.record({ waiting: fc.record({ reason: opt(fc.oneof(fc.constantFrom('ErrImagePull', 'ImagePullBackOff', 'CrashLoopBackOff', 'ContainerCreating', 'PodInitializing'), textArb), 4), message: opt(longTextArb(4096), 3) }, { requiredKeys: [] }) }),
    fc.record({ running: fc.record({ startedAt: opt(looseDateArb) }, { requiredKeys: [] }) }),
    fc.record({ terminated: fc.record({ exitCode: fc.integer({ min: -1, max: 255 }), reason: opt(fc.oneof(fc.constantFrom('Error', 'OOMKilled', 'Completed'), textArb)), message: opt(textArb) }, { requiredKeys: ['exitCode'] }) }),
  ), 4),
  lastState: opt(fc.record({ terminated: fc.record({ exitCode: fc.integer({ min: -1, max: 255 }), reason: opt(textArb) }, { requiredKeys: ['exitCode'] }) })),
}, { requiredKeys: ['name', 'ready', 'restartCount', 'image', 'imageID'] });

export function podsArb(ms: Microservice): fc.Arbitrary<Pod[] | undefined> {
  const pod = fc.record({
    deleting: fc.boolean(),
    status: opt(fc.record({
      phase: opt(fc.constantFrom('Pending', 'Running', 'Failed', 'Unknown')),
      conditions: opt(fc.array(fc.record({ type: fc.constantFrom('Ready', 'PodScheduled', 'ContainersReady', 'Initialized'), status: fc.constantFrom('True', 'False', 'Unknown'), reason: opt(fc.oneof(fc.constant('Unschedulable'), textArb)), message: opt(longTextArb(4096)) }, { requiredKeys: ['type', 'status'] }), { maxLength: 4 }), 4),
      initContainerStatuses: opt(fc.array(containerStatusArb, { maxLength: 2 })),
      containerStatuses: opt(fc.array(containerStatusArb, { maxLength: 3 }), 4),
    }, { requiredKeys: [] }), 6),
  });
  return opt(fc.array(pod, { maxLength: 6 }).map((pods) =>
    pods.map((p, i) => clean({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `${ms.metadata.name}-${i}`, namespace: ms.metadata.namespace, ...(p.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) }, ...(p.status ? { status: p.status } : {}) }) as Pod),
  ), 4);
}

/**
 * Events regarding `regarding` (objects of `namespace`): events.k8s.io/v1 ones, and core Events as
 * events.k8s.io serves them. Most sit in `namespace`; some in another one, as anyone allowed to
 * create Events there may write them (they are not the object's: readers leave them out).
 */
export function eventsArb(namespace: string, regarding: readonly { kind: string; name: string; uid: string }[]): fc.Arbitrary<KubeEvent[]> {
  const elsewhere = namespace === 'elsewhere' ? 'elsewhere-2' : 'elsewhere';
  const event = fc.record({
    core: fc.boolean(),
    inAnotherNamespace: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    on: fc.nat(),
    hostileRegarding: opt(fc.record({ kind: textArb, name: textArb })),
    eventTime: fc.oneof(looseDateArb, fc.constant(null)),
    series: opt(fc.record({ count: countArb, lastObservedTime: looseDateArb })),
    deprecatedCount: opt(countArb),
    deprecatedLastTimestamp: opt(fc.oneof(looseDateArb, fc.constant(null))),
    deprecatedSource: opt(fc.record({ component: opt(textArb) }, { requiredKeys: [] })),
    creationTimestamp: opt(dateArb, 4),
    reportingController: fc.oneof(fc.constantFrom('converge.dev/operators', ''), textArb),
    action: fc.oneof(fc.constantFrom('Apply', ''), textArb),
    reason: fc.oneof(reasonArb, textArb),
    type: fc.oneof({ weight: 5, arbitrary: fc.constantFrom('Normal', 'Warning') }, { weight: 1, arbitrary: fc.oneof(fc.constant(''), textArb) }),
    note: opt(longTextArb(8192), 5),
  });
  return fc.array(event, { maxLength: 24 }).map((events) =>
    events.map((e, i) => {
      const r = e.hostileRegarding ?? regarding[e.on % Math.max(1, regarding.length)] ?? { kind: 'Microservice', name: 'x', uid: 'u' };
      return clean({
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: `e${i}`, namespace: e.inAnotherNamespace ? elsewhere : namespace, ...(e.creationTimestamp ? { creationTimestamp: e.creationTimestamp } : {}) },
        eventTime: e.core ? null : e.eventTime,
        ...(e.core ? {} : e.series ? { series: e.series } : {}),
        ...(e.core ? { deprecatedCount: e.deprecatedCount ?? 1, deprecatedLastTimestamp: e.deprecatedLastTimestamp ?? null, deprecatedFirstTimestamp: e.deprecatedLastTimestamp ?? null, deprecatedSource: e.deprecatedSource ?? {} } : {}),
        reportingController: e.core ? '' : e.reportingController,
        reportingInstance: '',
        action: e.action,
        reason: e.reason,
        type: e.type,
        ...(e.note !== undefined ? { note: e.note } : {}),
        regarding: { kind: r.kind, name: r.name, uid: 'uid' in r ? r.uid : 'hostile-uid', namespace },
      }) as unknown as KubeEvent;
    }),
  );
}

export interface MicroserviceWorld {
  microservice: Microservice;
  deployment: Deployment | undefined;
  service: Service | undefined;
  endpointSlices: EndpointSlice[];
  pods: Pod[] | undefined;
  events: KubeEvent[];
}

export const microserviceWorldArb: fc.Arbitrary<MicroserviceWorld> = microserviceArb.chain((microservice) =>
  fc.record({
    microservice: fc.constant(microservice),
    deployment: deploymentArb(microservice),
    service: serviceArb(microservice),
    endpointSlices: endpointSlicesArb(microservice),
    pods: podsArb(microservice),
    events: eventsArb(microservice.metadata.namespace!, [{ kind: MICROSERVICE_KIND, name: microservice.metadata.name!, uid: microservice.metadata.uid! }, { kind: 'Deployment', name: microservice.metadata.name!, uid: 'dep-uid' }]),
  }),
);

export interface ProviderWorld {
  provider: DigitalHumanProvider;
  credentials: { secretExists: boolean | null; keyPresent: boolean | null; error?: string };
  events: KubeEvent[];
}

export const providerWorldArb: fc.Arbitrary<ProviderWorld> = providerArb.chain((provider) =>
  fc.record({
    provider: fc.constant(provider),
    credentials: fc.oneof(
      fc.record({ secretExists: fc.constant(true), keyPresent: fc.boolean() }),
      fc.record({ secretExists: fc.constant(false), keyPresent: fc.constant(null) }),
      fc.record({ secretExists: fc.constant(null), keyPresent: fc.constant(null), error: opt(textArb, 3) }, { requiredKeys: ['secretExists', 'keyPresent'] }),
    ).map(clean),
    events: eventsArb(provider.metadata.namespace!, [{ kind: PROVIDER_KIND, name: provider.metadata.name!, uid: provider.metadata.uid! }]),
  }),
);

/** Paths of `undefined`, non-finite numbers, lone surrogates and non-plain values; `allow` exempts documented ones. */
export function notJson(value: unknown, path = '$', allow: (path: string) => boolean = () => false, out: string[] = []): string[] {
  if (value === undefined) {
    if (!allow(path)) out.push(`${path}: undefined`);
  } else if (typeof value === 'number') {
    if (!Number.isFinite(value)) out.push(`${path}: ${value}`);
  } else if (typeof value === 'string') {
    if (!value.isWellFormed()) out.push(`${path}: lone surrogate`);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => notJson(v, `${path}[${i}]`, allow, out));
  } else if (value !== null && typeof value === 'object') {
    if (Object.getPrototypeOf(value) !== Object.prototype) out.push(`${path}: not a plain object`);
    for (const [k, v] of Object.entries(value)) notJson(v, `${path}.${k}`, allow, out);
  } else if (typeof value !== 'boolean' && value !== null) {
    out.push(`${path}: ${typeof value}`);
  }
  return out;
}
