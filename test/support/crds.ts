/**
 * Installs the project's CRDs on the test cluster (Server-Side Apply, so concurrent test files
 * can all call it) and waits until the API server serves them.
 * @module
 */
import { CustomResourceDefinitionKind } from '@converge/runtime';
import type { KubeClient, CustomResourceDefinition } from '@converge/runtime';
import { MicroserviceCrd } from '../../packages/operators/src/operators/microservice/index.ts';
import { eventually } from './operator-harness.ts';

export async function ensureCrds(client: KubeClient, crds: CustomResourceDefinition[] = [MicroserviceCrd as CustomResourceDefinition]): Promise<void> {
  for (const crd of crds) {
    await client.apply(CustomResourceDefinitionKind, crd, { fieldManager: 'converge-tests', force: true });
  }
  for (const crd of crds) {
    await eventually(async () => {
      const live = await client.get(CustomResourceDefinitionKind, { namespace: '', name: crd.metadata.name! });
      const conditions = (live.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
      return conditions.some((c) => c.type === 'Established' && c.status === 'True');
    }, { what: `CRD ${crd.metadata.name} established` });
  }
}
