/**
 * Which parts of a Microservice's Deployment and Service the operator owns outright, for the
 * no-op check (`contains.ts`): there, a key the rendering does not set is a difference too, so a
 * hand edit that only *adds* something (a selector key, a probe's host, a container's command, a
 * hostPort) is repaired and shown by `converge explain` like any other drift.
 *
 * What a caller can rely on:
 * - Owned outright (closed): the Service's `selector` and each of its `ports`; the Deployment's
 *   `selector` and `matchLabels`, and each container as rendered — the container itself, its
 *   `ports`, `env` items, both probes and their `httpGet`. The in-place update (`update-body.ts`)
 *   replaces all of these wholesale, so a key closed here is one a write would remove.
 * - A key the API server fills in on every write is not a difference while it holds the value the
 *   API server gives it (probe timeouts and thresholds, `httpGet.scheme`, a container's
 *   `terminationMessagePath`/`Policy`). Keys of a container that admission policies commonly add
 *   (`POLICY_ADDED`: `volumeMounts`, `lifecycle`, `startupProbe`, `resources` and what is added
 *   inside the rendered `resources`, `securityContext`, `imagePullPolicy` …) are not differences
 *   whatever they hold: each such mutation would otherwise be written back on every resync, for
 *   ever. A write still removes them (they are not kept by the update). An empty map or
 *   list (`resources: {}`) is the same as none. `desired-state-differential.test.ts` holds these
 *   defaults to the real API server: what it stores from a rendering has no difference.
 * - Everything else stays open, as before: metadata labels and annotations (others' are kept),
 *   the pod template's labels (admission policies add some; an extra pod label changes nothing
 *   this Microservice serves) and annotations (`kubectl rollout restart`), fields the operator does not
 *   render at all (a Deployment's `strategy`, the pod's `nodeSelector`, the Service's allocated
 *   `clusterIP` …): those are written only when something owned differs (ADR 0003).
 * - A Service port whose `targetPort` is the number the rendered name (`http`) stands for — the
 *   container port, equal to the Service port by construction — is the same port: Services
 *   written before targetPorts were named are not rewritten on an upgrade; the next write that
 *   changes the port sends the name.
 * Pure data and pure functions.
 * @module
 */

/** The rules of one node of a rendered object. */
export interface FieldRules {
  /**
   * The object at this node is owned outright: a key the desired object does not set is a
   * difference, unless listed here with the value the API server gives it (`ANY_VALUE`: any).
   */
  readonly closed?: Readonly<Record<string, unknown>>;
  /** The rules of the object's fields. */
  readonly fields?: Readonly<Record<string, FieldRules>>;
  /** The rules of every item of the list at this node. */
  readonly items?: FieldRules;
  /** The live value spelled as the desired one would be, where both mean the same (never mutates). */
  readonly same?: (current: unknown, desired: unknown) => unknown;
}

/** In `closed`: the API server may give this key any value. */
export const ANY_VALUE: unique symbol = Symbol('any value');

const exact: FieldRules = { closed: {} };

/** A probe as rendered (`httpGet` on a path and port), with what the API server defaults. */
const probe: FieldRules = {
  closed: { timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 },
  fields: { httpGet: { closed: { scheme: 'HTTP' } } },
};

/**
 * Keys of a container that admission policies commonly add to a Deployment's pod template
 * (Kyverno's autogen carries pod rules to Deployments): a certificate's `volumeMounts`, a preStop
 * `lifecycle` hook, a `startupProbe`, default `resources`, a `securityContext`, an
 * `imagePullPolicy`. Not differences whatever they hold: each would otherwise be written back on
 * every resync and mutated again by the policy, for ever (a PUT and an Event per object per
 * pass). What a hand edit adds that changes what runs (`command`, `args`, `workingDir`, `envFrom`,
 * `stdin`, `tty` …) stays a difference.
 */
const POLICY_ADDED = { volumeMounts: ANY_VALUE, volumeDevices: ANY_VALUE, lifecycle: ANY_VALUE, startupProbe: ANY_VALUE, resizePolicy: ANY_VALUE, resources: ANY_VALUE, securityContext: ANY_VALUE, imagePullPolicy: ANY_VALUE } as const;

const container: FieldRules = {
  closed: { terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', ...POLICY_ADDED },
  fields: {
    ports: { items: exact },
    env: { items: { closed: {}, fields: { valueFrom: { closed: {}, fields: { secretKeyRef: exact } } } } },
    readinessProbe: probe,
    livenessProbe: probe,
    // `resources` as rendered must be there; what a policy adds to it (a limit, another request) is no difference.
  },
};

export const DEPLOYMENT_RULES: FieldRules = {
  fields: {
    spec: {
      fields: {
        selector: { closed: {}, fields: { matchLabels: exact } },
        template: { fields: { spec: { fields: { containers: { items: container } } } } },
      },
    },
  },
};

/** A numeric targetPort equal to the port, where the name is desired: the same port (see the module header). */
function legacyTargetPort(current: unknown, desired: unknown): unknown {
  if (!isRecord(current) || !isRecord(desired)) return current;
  if (typeof desired.targetPort !== 'string' || typeof current.targetPort !== 'number') return current;
  return current.targetPort === desired.port ? { ...current, targetPort: desired.targetPort } : current;
}

export const SERVICE_RULES: FieldRules = {
  fields: {
    spec: {
      fields: {
        selector: exact,
        ports: { items: { closed: {}, same: legacyTargetPort } },
      },
    },
  },
};

/** The rules for a desired object of the operator's: by its `apiVersion` and `kind`; undefined for anything else. */
export function ownedFieldsOf(desired: unknown): FieldRules | undefined {
  if (!isRecord(desired)) return undefined;
  if (desired.apiVersion === 'apps/v1' && desired.kind === 'Deployment') return DEPLOYMENT_RULES;
  if (desired.apiVersion === 'v1' && desired.kind === 'Service') return SERVICE_RULES;
  return undefined;
}

/** The rules for a child kind (`Deployment`, `Service`). */
export function ownedFieldsOfKind(kind: string): FieldRules | undefined {
  return kind === 'Deployment' ? DEPLOYMENT_RULES : kind === 'Service' ? SERVICE_RULES : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
