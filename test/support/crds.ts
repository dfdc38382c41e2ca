/**
 * Installs the project's CRDs on the test cluster (Server-Side Apply, so concurrent test files
 * can all call it) and waits until the API server serves them.
 * @module
 */
import { installCustomResourceDefinitions } from '@converge/runtime';
import type { KubeClient, CustomResourceDefinition } from '@converge/runtime';
import { MicroserviceCrd } from '../../packages/operators/src/operators/microservice/index.ts';

export async function ensureCrds(client: KubeClient, crds: CustomResourceDefinition[] = [MicroserviceCrd as CustomResourceDefinition]): Promise<void> {
  await installCustomResourceDefinitions(client, crds, { fieldManager: 'converge-tests' });
}
