/**
 * What `converge dev` writes to its cluster from the samples, and when it calls them Ready.
 * `applySamples` creates the namespace if it is missing and applies each sample with Server-Side
 * Apply (field manager `converge-dev`, forced), so running it again changes nothing; a sample of
 * a kind it does not know is refused before anything is written after it. `samplesReady` is true
 * once every sample (Secrets aside) is converged for its current generation in a status document.
 * @module
 */
import { NamespaceKind, SecretKind, isAlreadyExists } from '@converge/runtime';
import type { KubeClient, KubeObject, ResourceKind } from '@converge/runtime';
import { MicroserviceKind } from '../../operators/microservice/api/index.ts';
import { DigitalHumanProviderKind } from '../../operators/provider/api/index.ts';
import type { StatusDocument } from '../views/index.ts';
import type { SampleObject } from './samples.ts';

/** Kinds `converge dev` can apply from the samples. */
const SAMPLE_KINDS: Record<string, ResourceKind> = {
  'v1/Secret': SecretKind,
  [`${MicroserviceKind.apiVersion}/${MicroserviceKind.kind}`]: MicroserviceKind,
  [`${DigitalHumanProviderKind.apiVersion}/${DigitalHumanProviderKind.kind}`]: DigitalHumanProviderKind,
};

export async function applySamples(client: KubeClient, namespace: string, samples: readonly SampleObject[]): Promise<void> {
  try {
    await client.create(NamespaceKind, { metadata: { name: namespace } });
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
  for (const sample of samples) {
    const kind = SAMPLE_KINDS[`${sample.apiVersion}/${sample.kind}`];
    if (!kind) throw new Error(`the samples contain ${sample.apiVersion} ${sample.kind}, which converge dev does not know how to apply`);
    await client.apply(kind, sample as KubeObject, { fieldManager: 'converge-dev', force: true });
  }
}

/** The key `samplesReady` expects for a sample: `<Kind> <namespace>/<name>`; Secrets have none. */
export function sampleKeys(samples: readonly SampleObject[], namespace: string): string[] {
  return samples.filter((s) => s.kind !== 'Secret').map((s) => `${s.kind} ${namespace}/${s.metadata.name}`);
}

export function samplesReady(doc: StatusDocument, keys: readonly string[]): boolean {
  const converged = new Set([
    ...doc.microservices.filter((r) => r.converged).map((r) => `Microservice ${r.namespace}/${r.name}`),
    ...doc.providers.filter((r) => r.converged).map((r) => `DigitalHumanProvider ${r.namespace}/${r.name}`),
  ]);
  return keys.every((k) => converged.has(k));
}
