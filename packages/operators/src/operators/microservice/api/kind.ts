/**
 * The Microservice kinds as plain descriptors (group, version, plural): what reading and writing
 * Microservices needs, without the schemas. `microservice.ts` builds the CRD from the schemas, and
 * `kinds.test.ts` checks that the kinds it defines are these.
 * @module
 */
import { defineKind } from '@converge/runtime';
import type { ResourceKind } from '@converge/runtime';
import type { Microservice } from './v1.ts';
import type { MicroserviceV1alpha1 } from './v1alpha1.ts';
import { MICROSERVICE_GROUP, MICROSERVICE_KIND, MICROSERVICE_PLURAL, MICROSERVICE_VERSION } from './constants.ts';

/** `microservices.platform.example.io/v1` (the hub), typed as `Microservice`. */
export const MicroserviceKind: ResourceKind<Microservice> = defineKind<Microservice>({
  group: MICROSERVICE_GROUP, version: MICROSERVICE_VERSION, kind: MICROSERVICE_KIND, plural: MICROSERVICE_PLURAL, namespaced: true, statusSubresource: true,
});

/** `microservices.platform.example.io/v1alpha1` (deprecated; converted by the webhook). */
export const MicroserviceV1alpha1Kind: ResourceKind<MicroserviceV1alpha1> = defineKind<MicroserviceV1alpha1>({
  group: MICROSERVICE_GROUP, version: 'v1alpha1', kind: MICROSERVICE_KIND, plural: MICROSERVICE_PLURAL, namespaced: true, statusSubresource: true,
});
