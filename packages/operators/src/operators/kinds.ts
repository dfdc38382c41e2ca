/**
 * The two kinds as plain descriptors (group, version, plural), without their schemas: what a
 * command that only reads them needs (`converge status`, `explain`). The schemas (TypeBox, ≈ 250
 * modules, ≈ 150 ms to load) come with `./microservice/api/` and `./provider/api/`, whose
 * `MicroserviceKind` / `DigitalHumanProviderKind` these equal (`kinds.test.ts` checks it).
 * @module
 */
import { defineKind } from '@converge/runtime';
import type { ResourceKind } from '@converge/runtime';
import type { Microservice } from './microservice/api/index.ts';
import type { DigitalHumanProvider } from './provider/api/index.ts';
import { MICROSERVICE_GROUP, MICROSERVICE_KIND, MICROSERVICE_PLURAL, MICROSERVICE_VERSION } from './microservice/api/constants.ts';
import { PROVIDER_GROUP, PROVIDER_KIND, PROVIDER_PLURAL, PROVIDER_VERSION } from './provider/api/constants.ts';

export const MicroserviceKindDescriptor: ResourceKind<Microservice> = defineKind<Microservice>({
  group: MICROSERVICE_GROUP, version: MICROSERVICE_VERSION, kind: MICROSERVICE_KIND, plural: MICROSERVICE_PLURAL, namespaced: true,
});

export const DigitalHumanProviderKindDescriptor: ResourceKind<DigitalHumanProvider> = defineKind<DigitalHumanProvider>({
  group: PROVIDER_GROUP, version: PROVIDER_VERSION, kind: PROVIDER_KIND, plural: PROVIDER_PLURAL, namespaced: true,
});
