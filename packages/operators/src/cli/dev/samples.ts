/**
 * The samples `converge dev` applies: read from `deploy/samples/` (the files its
 * kustomization.yaml lists, so the two never drift apart), then pointed at the local vendor
 * simulator — each DigitalHumanProvider's `spec.endpoint` becomes the simulator's base URL and
 * the Secret it names gets the simulator's token under the key it names. The token is written
 * only into that Secret's `stringData`; it is never logged or printed.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import type { KubeObject } from '@converge/runtime';
import { DEFAULT_CREDENTIALS_KEY, PROVIDER_KIND } from '../../operators/provider/api/index.ts';

export interface SampleObject extends KubeObject {
  apiVersion: string;
  kind: string;
  [field: string]: unknown;
}

/** Reads every object of the kustomization in `dir` (its `resources`, in order). */
export async function loadSamples(dir: string): Promise<SampleObject[]> {
  const kustomization = parse(await readFile(join(dir, 'kustomization.yaml'), 'utf8')) as { resources?: string[] } | null;
  const files = kustomization?.resources ?? [];
  if (files.length === 0) throw new Error(`${join(dir, 'kustomization.yaml')} lists no resources`);
  const objects: SampleObject[] = [];
  for (const file of files) {
    const text = await readFile(join(dir, file), 'utf8');
    for (const doc of parseAllDocuments(text)) {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
      const value = doc.toJS() as SampleObject | null;
      if (!value) continue;
      if (typeof value.apiVersion !== 'string' || typeof value.kind !== 'string' || !value.metadata?.name) {
        throw new Error(`${file}: every document needs apiVersion, kind and metadata.name`);
      }
      objects.push(value);
    }
  }
  return objects;
}

export interface SimulatorTarget {
  /** The simulator's base URL (https://127.0.0.1:<port>). */
  endpoint: string;
  /** The simulator's bearer token. */
  token: string;
}

/**
 * Returns copies of `samples` placed in `namespace`, with providers pointed at the simulator and
 * the Secrets they name holding its token. Pure; Secrets come first so that a provider never
 * waits for its credentials. Throws when a provider names a Secret that is not among the samples.
 */
export function prepareSamples(samples: readonly SampleObject[], namespace: string, simulator: SimulatorTarget): SampleObject[] {
  const out = samples.map((s) => structuredClone(s));
  for (const o of out) o.metadata = { ...o.metadata, namespace };
  for (const p of out.filter((o) => o.kind === PROVIDER_KIND)) {
    // v1 says spec.credentials.secretRef, the deprecated v1alpha1 spec.credentialsSecretRef.
    const spec = (p.spec ?? {}) as { endpoint?: string; credentials?: { secretRef?: { name?: string; key?: string } }; credentialsSecretRef?: { name?: string; key?: string } };
    spec.endpoint = simulator.endpoint;
    p.spec = spec;
    const ref = spec.credentials?.secretRef ?? spec.credentialsSecretRef;
    const secretName = ref?.name;
    const key = ref?.key ?? DEFAULT_CREDENTIALS_KEY;
    const secret = out.find((o) => o.kind === 'Secret' && o.apiVersion === 'v1' && o.metadata.name === secretName);
    if (!secret) throw new Error(`DigitalHumanProvider ${p.metadata.name} names Secret ${secretName ?? '(none)'}, which is not among the samples`);
    const data = { ...((secret.data as Record<string, string> | undefined) ?? {}) };
    delete data[key];
    if (Object.keys(data).length > 0) secret.data = data;
    else delete secret.data;
    secret.stringData = { ...((secret.stringData as Record<string, string> | undefined) ?? {}), [key]: simulator.token };
  }
  const rank = (o: SampleObject) => (o.kind === 'Secret' ? 0 : 1);
  return out.map((o, i) => ({ o, i })).sort((a, b) => rank(a.o) - rank(b.o) || a.i - b.i).map(({ o }) => o);
}

/** `Kind/name` of each object, for progress lines. */
export function describeSamples(samples: readonly SampleObject[]): string {
  return samples.map((s) => `${s.kind}/${s.metadata.name}`).join(', ');
}
