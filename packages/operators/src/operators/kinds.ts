/**
 * The two kinds as plain descriptors (group, version, plural), without their schemas: what a
 * command that only reads them needs (`converge status`, `explain`). The schemas (TypeBox, ≈ 250
 * modules, ≈ 150 ms to load) come with `./microservice/api/index.ts` and `./provider/api/`, whose
 * kinds these equal (`kinds.test.ts` checks it). They are `microservice/api/kind.ts`'s and `provider/api/kind.ts`'s.
 * @module
 */
import type { ResourceKind } from '@converge/runtime';
import type { Microservice } from './microservice/api/schema-free.ts';
import { MicroserviceKind } from './microservice/api/kind.ts';
import type { DigitalHumanProvider } from './provider/api/schema-free.ts';
import { DigitalHumanProviderKind } from './provider/api/kind.ts';

export const MicroserviceKindDescriptor: ResourceKind<Microservice> = MicroserviceKind;

export const DigitalHumanProviderKindDescriptor: ResourceKind<DigitalHumanProvider> = DigitalHumanProviderKind;
