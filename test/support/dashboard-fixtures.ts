/**
 * Test support for the dashboard: Microservices and DigitalHumanProviders with the statuses an
 * operator would write (written directly through the status subresource: the dashboard only
 * reads, so its tests need states, not operators), a Chromium launched the way the closed
 * network of the test machines needs, and a place for screenshots.
 * @module
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeClient } from '@converge/runtime';
import { MicroserviceKind } from '../../packages/operators/src/operators/microservice/index.ts';
import type { Microservice } from '../../packages/operators/src/operators/microservice/index.ts';
import { DigitalHumanProviderKind, PROVIDER_FINALIZER } from '../../packages/operators/src/operators/provider/api/index.ts';
import type { DigitalHumanProvider } from '../../packages/operators/src/operators/provider/api/index.ts';

export const ARTIFACTS_DIR = fileURLToPath(new URL('../../.converge/test-artifacts/dashboard/', import.meta.url));

export type Readiness = { status: 'True' | 'False' | 'Unknown'; reason: string; message?: string; lastTransitionTime?: string };

function condition(type: string, c: Readiness, generation: number) {
  return { type, status: c.status, reason: c.reason, message: c.message ?? '', observedGeneration: generation, lastTransitionTime: c.lastTransitionTime ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z') };
}

/** Creates a Microservice and writes a status for its generation: Ready as given, phase ResourcesApplied. */
export async function createMicroservice(client: KubeClient, ns: string, name: string, ready: Readiness, image = 'ghcr.io/yrw9281/it30-todo-api:0.1.0'): Promise<Microservice> {
  const ms = await client.create(MicroserviceKind, { apiVersion: MicroserviceKind.apiVersion, kind: MicroserviceKind.kind, metadata: { name, namespace: ns }, spec: { container: { image, port: 8080 } } } as Microservice);
  return setMicroserviceReady(client, ms, ready);
}

export async function setMicroserviceReady(client: KubeClient, ms: Microservice, ready: Readiness): Promise<Microservice> {
  const generation = ms.metadata.generation ?? 1;
  const ok = ready.status === 'True';
  return client.patch(MicroserviceKind, { namespace: ms.metadata.namespace!, name: ms.metadata.name! }, {
    type: 'merge',
    body: {
      status: {
        observedGeneration: generation,
        phase: 'ResourcesApplied',
        rollout: { replicas: 2, updatedReplicas: 2, availableReplicas: ok ? 2 : 0, readyEndpoints: ok ? 2 : 0 },
        conditions: [
          condition('Ready', ready, generation),
          condition('Progressing', ok ? { status: 'False', reason: 'RolloutComplete' } : { status: 'True', reason: 'RolloutInProgress' }, generation),
          condition('Stalled', { status: 'False', reason: 'NotStalled' }, generation),
        ],
      },
    },
  }, { subresource: 'status' });
}

/** Creates a provider with the finalizer and a status: Ready as given, a providerID when Ready=True. */
export async function createProvider(client: KubeClient, ns: string, name: string, region: string, ready: Readiness): Promise<DigitalHumanProvider> {
  const p = await client.create(DigitalHumanProviderKind, {
    apiVersion: DigitalHumanProviderKind.apiVersion,
    kind: DigitalHumanProviderKind.kind,
    metadata: { name, namespace: ns, finalizers: [PROVIDER_FINALIZER] },
    spec: { endpoint: 'https://vendor.example', region, credentials: { secretRef: { name: 'vendor-token' } } },
  } as DigitalHumanProvider);
  return setProviderReady(client, p, ready);
}

export async function setProviderReady(client: KubeClient, p: DigitalHumanProvider, ready: Readiness, extraStatus: Record<string, unknown> = {}): Promise<DigitalHumanProvider> {
  const generation = p.metadata.generation ?? 1;
  return client.patch(DigitalHumanProviderKind, { namespace: p.metadata.namespace!, name: p.metadata.name! }, {
    type: 'merge',
    body: { status: { observedGeneration: generation, providerID: ready.status === 'True' ? `inst-${p.metadata.uid?.slice(0, 8)}` : null, conditions: [condition('Ready', ready, generation)], ...extraStatus } },
  }, { subresource: 'status' });
}

/** Removes the finalizer so the namespace can go. */
export async function releaseProviders(client: KubeClient, ns: string): Promise<void> {
  const { items } = await client.listAll(DigitalHumanProviderKind, { namespace: ns });
  await Promise.all(items.map((p) => client.patch(DigitalHumanProviderKind, { namespace: ns, name: p.metadata.name! }, { type: 'merge', body: { metadata: { finalizers: null } } }).catch(() => undefined)));
}

/** Flags for Debian's chromium on a machine whose network reaches only package registries. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Launches headless Chromium (playwright-core) with a new empty profile (`--user-data-dir`),
 * removed on close.
 */
export async function launchChromium(): Promise<{ context: import('playwright-core').BrowserContext; close(): Promise<void> }> {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'converge-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1440, height: 900 },
  });
  return {
    context,
    close: async () => {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export function artifactsDir(sub = ''): string {
  const dir = join(ARTIFACTS_DIR, sub);
  mkdirSync(dir, { recursive: true });
  return dir;
}
