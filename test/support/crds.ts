/**
 * Installs the project's CRDs on the test cluster (Server-Side Apply, so concurrent test files
 * can all call it) and waits until the API server serves them. They are installed as the suite
 * serves them: converted by the suite's webhook (`suite-webhook.ts`).
 * @module
 */
import { installCustomResourceDefinitions } from '@converge/runtime';
import type { KubeClient, CustomResourceDefinition } from '@converge/runtime';
import { suiteCrds } from './suite-webhook.ts';

export async function ensureCrds(client: KubeClient, crds: CustomResourceDefinition[] = suiteCrds() as unknown as CustomResourceDefinition[]): Promise<void> {
  await installCustomResourceDefinitions(client, crds, { fieldManager: 'converge-tests' });
}
