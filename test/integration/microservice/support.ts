/**
 * Shared setup of the Microservice operator tests: the operator in-process on the shared
 * control plane, watching one test namespace, with recorded Events and counted writes.
 */
import type { TestContext } from 'node:test';
import { DeploymentKind, ServiceKind, defineKind, isInvalid, isNotFound } from '@converge/runtime';
import type { Deployment, KubeClient, KubeObject, Manager, Service } from '@converge/runtime';
import type { FaultMix, FaultProxy } from '../../support/fault-proxy.ts';
import { registerMicroserviceOperator, MicroserviceKind, defaultPlatformDefaults } from '../../../packages/operators/src/operators/microservice/index.ts';
import type { Microservice, PlatformDefaults } from '../../../packages/operators/src/operators/microservice/index.ts';
import { startManager, testClient, testNamespace, eventually } from '../../support/operator-harness.ts';
import { ensureCrds } from '../../support/crds.ts';

export interface RecordedEvent { type: 'Normal' | 'Warning'; reason: string; name: string; note?: string }

export interface OperatorUnderTest {
  manager: Manager;
  events: RecordedEvent[];
  /** Write requests the operator has sent so far (create, update, patch, delete). */
  writes(): number;
  writeLog: { verb: string; resource: string }[];
  /** The fault proxy between the operator and the API server (see operator-harness.ts). */
  proxy: FaultProxy | undefined;
  stop(): Promise<void>;
}

export async function setup(t: TestContext): Promise<{ client: KubeClient; ns: string }> {
  const client = testClient();
  await ensureCrds(client);
  const ns = await testNamespace(t, client, 'ms');
  return { client, ns };
}

export async function startOperator(t: TestContext, ns: string, options: { defaults?: Partial<PlatformDefaults>; resyncPeriodMs?: number; statusProgressIntervalMs?: number; refusalRetryMs?: number; client?: KubeClient; faultPoint?: (name: string) => void | Promise<void>; faults?: Partial<FaultMix> | false } = {}): Promise<OperatorUnderTest> {
  const events: RecordedEvent[] = [];
  const writeLog: { verb: string; resource: string }[] = [];
  const sink = {
    normal: (o: KubeObject, reason: string, _action: string, note?: string) => events.push({ type: 'Normal', reason, name: o.metadata.name ?? '', ...(note ? { note } : {}) }),
    warning: (o: KubeObject, reason: string, _action: string, note?: string) => events.push({ type: 'Warning', reason, name: o.metadata.name ?? '', ...(note ? { note } : {}) }),
  };
  const { manager, stop, proxy } = await startManager(t, {
    namespaces: [ns],
    ...(options.client ? { client: options.client } : {}),
    ...(options.faults !== undefined ? { faults: options.faults } : {}),
    configure: (m) => {
      m.client.observe({ onRequest: (r) => { if (!['get', 'list', 'watch'].includes(r.verb)) writeLog.push({ verb: r.verb, resource: r.resource }); } });
      registerMicroserviceOperator(m, {
        events: sink,
        defaults: { ...defaultPlatformDefaults, ...options.defaults },
        resyncPeriodMs: options.resyncPeriodMs ?? 10_000,
        ...(options.statusProgressIntervalMs !== undefined ? { statusProgressIntervalMs: options.statusProgressIntervalMs } : {}),
        ...(options.refusalRetryMs !== undefined ? { refusalRetryMs: options.refusalRetryMs } : {}),
        ...(options.faultPoint ? { faultPoint: options.faultPoint } : {}),
      });
    },
  });
  return { manager, events, writes: () => writeLog.length, writeLog, proxy, stop };
}

export function microservice(ns: string, name: string, image: string, port: number): Microservice {
  return { metadata: { name, namespace: ns }, spec: { container: { image, port } } };
}

export async function getMs(client: KubeClient, ns: string, name: string): Promise<Microservice> {
  return client.get(MicroserviceKind, { namespace: ns, name });
}

export async function tryGet<T extends KubeObject>(fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await fn();
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export const getDeployment = (client: KubeClient, ns: string, name: string): Promise<Deployment | undefined> =>
  tryGet(() => client.get(DeploymentKind, { namespace: ns, name }));
export const getService = (client: KubeClient, ns: string, name: string): Promise<Service | undefined> =>
  tryGet(() => client.get(ServiceKind, { namespace: ns, name }));

export function condition(ms: Microservice, type: string) {
  return ms.status?.conditions?.find((c) => c.type === type);
}

/** Waits until the CR reports Ready=True for its current generation; returns it. */
export async function waitReady(client: KubeClient, ns: string, name: string, timeoutMs = 90_000): Promise<Microservice> {
  return eventually(async () => {
    const ms = await getMs(client, ns, name);
    const ready = condition(ms, 'Ready');
    return ready?.status === 'True' && ready.observedGeneration === ms.metadata.generation && ms.status?.observedGeneration === ms.metadata.generation ? ms : undefined;
  }, { timeoutMs, what: `${ns}/${name} Ready` });
}

/** admissionregistration.k8s.io/v1: a cluster's own admission rules, which change without any Microservice changing. */
const ValidatingAdmissionPolicyKind = defineKind<KubeObject & { spec: unknown }>({ group: 'admissionregistration.k8s.io', version: 'v1', kind: 'ValidatingAdmissionPolicy', plural: 'validatingadmissionpolicies', namespaced: false });
const ValidatingAdmissionPolicyBindingKind = defineKind<KubeObject & { spec: unknown }>({ group: 'admissionregistration.k8s.io', version: 'v1', kind: 'ValidatingAdmissionPolicyBinding', plural: 'validatingadmissionpolicybindings', namespaced: false });
const MutatingAdmissionPolicyKind = defineKind<KubeObject & { spec: unknown }>({ group: 'admissionregistration.k8s.io', version: 'v1', kind: 'MutatingAdmissionPolicy', plural: 'mutatingadmissionpolicies', namespaced: false });
const MutatingAdmissionPolicyBindingKind = defineKind<KubeObject & { spec: unknown }>({ group: 'admissionregistration.k8s.io', version: 'v1', kind: 'MutatingAdmissionPolicyBinding', plural: 'mutatingadmissionpolicybindings', namespaced: false });

/** What a Deployment admission policy does: refuse (a CEL condition every Deployment must meet) or change (a CEL JSONPatch expression). */
export type DeploymentPolicy = { validate: string; message: string } | { jsonPatch: string };

/**
 * A cluster admission policy over the Deployments of namespace `ns` (CREATE and UPDATE), bound to
 * that namespace, removed when the test ends; returns once the API server applies it (a dry-run
 * create of a Deployment running `probeImage` is refused, or comes back changed). `lift()`
 * removes the binding: the policy stops applying with no Microservice changing.
 */
export async function deploymentPolicy(t: TestContext, client: KubeClient, ns: string, name: string, policy: DeploymentPolicy, probeImage: string): Promise<{ lift(): Promise<void> }> {
  const [kind, bindingKind] = 'validate' in policy ? [ValidatingAdmissionPolicyKind, ValidatingAdmissionPolicyBindingKind] : [MutatingAdmissionPolicyKind, MutatingAdmissionPolicyBindingKind];
  const matchConstraints = { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] }] };
  const matchResources = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } };
  const spec = 'validate' in policy
    ? { failurePolicy: 'Fail', matchConstraints, validations: [{ expression: policy.validate, message: policy.message, reason: 'Invalid' }] }
    : { failurePolicy: 'Fail', matchConstraints, reinvocationPolicy: 'Never', mutations: [{ patchType: 'JSONPatch', jsonPatch: { expression: policy.jsonPatch } }] };
  await client.create(kind, { metadata: { name }, spec });
  t.after(() => client.delete(kind, { namespace: '', name }).catch(() => undefined));
  await client.create(bindingKind, { metadata: { name }, spec: { policyName: name, matchResources, ...('validate' in policy ? { validationActions: ['Deny'] } : {}) } });
  t.after(() => client.delete(bindingKind, { namespace: '', name }).catch(() => undefined));
  const probe: Deployment = {
    metadata: { name: 'probe', namespace: ns },
    spec: { selector: { matchLabels: { app: 'probe' } }, template: { metadata: { labels: { app: 'probe' } }, spec: { containers: [{ name: 'app', image: probeImage }] } } },
  };
  const applies = (): Promise<boolean> => client.create(DeploymentKind, probe, { dryRun: true }).then(
    (answer) => !('validate' in policy) && answer.spec?.template.spec?.containers[0]?.image !== probeImage,
    (err: unknown) => 'validate' in policy && isInvalid(err),
  );
  await eventually(applies, { what: `the policy ${name} in force`, timeoutMs: 30_000 });
  return {
    async lift() {
      await client.delete(bindingKind, { namespace: '', name });
      await eventually(async () => !(await applies()), { what: `the policy ${name} lifted`, timeoutMs: 30_000 });
    },
  };
}
