/**
 * The two kinds as plain descriptors (group, version, plural), without their schemas: what a
 * command that only reads them needs (`converge status`, `explain`). The schemas (TypeBox, ≈ 250
 * modules, ≈ 150 ms to load) come with `./microservice/api/index.ts` and `./provider/api/`, whose
 * kinds these equal (`kinds.test.ts` checks it). The Microservice's is `microservice/api/kind.ts`'s.
 * @module
 */
import { defineKind } from '@converge/runtime';
import type { ResourceKind } from '@converge/runtime';
import type { Microservice } from './microservice/api/schema-free.ts';
import { MicroserviceKind } from './microservice/api/kind.ts';
import type { DigitalHumanProvider } from './provider/api/index.ts';
import { PROVIDER_GROUP, PROVIDER_KIND, PROVIDER_PLURAL, PROVIDER_VERSION } from './provider/api/constants.ts';

export const MicroserviceKindDescriptor: ResourceKind<Microservice> = MicroserviceKind;

export const DigitalHumanProviderKindDescriptor: ResourceKind<DigitalHumanProvider> = defineKind<DigitalHumanProvider>({
  group: PROVIDER_GROUP, version: PROVIDER_VERSION, kind: PROVIDER_KIND, plural: PROVIDER_PLURAL, namespaced: true,
});
