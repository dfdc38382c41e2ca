/**
 * The DigitalHumanProvider kinds as plain descriptors (group, version, plural): what reading and
 * writing providers needs, without the schemas. `digital-human-provider.ts` builds the CRD from
 * the schemas, and `kinds.test.ts` checks that the kinds it defines are these.
 * @module
 */
import { defineKind } from '@converge/runtime';
import type { ResourceKind } from '@converge/runtime';
import type { DigitalHumanProvider } from './v1.ts';
import type { DigitalHumanProviderV1alpha1 } from './v1alpha1.ts';
import { PROVIDER_GROUP, PROVIDER_KIND, PROVIDER_PLURAL, PROVIDER_VERSION } from './constants.ts';

/** `digitalhumanproviders.dhp.example.com/v1` (the hub), typed as `DigitalHumanProvider`. */
export const DigitalHumanProviderKind: ResourceKind<DigitalHumanProvider> = defineKind<DigitalHumanProvider>({
  group: PROVIDER_GROUP, version: PROVIDER_VERSION, kind: PROVIDER_KIND, plural: PROVIDER_PLURAL, namespaced: true, statusSubresource: true,
});

/** `digitalhumanproviders.dhp.example.com/v1alpha1` (deprecated; converted by the webhook). */
export const DigitalHumanProviderV1alpha1Kind: ResourceKind<DigitalHumanProviderV1alpha1> = defineKind<DigitalHumanProviderV1alpha1>({
  group: PROVIDER_GROUP, version: 'v1alpha1', kind: PROVIDER_KIND, plural: PROVIDER_PLURAL, namespaced: true, statusSubresource: true,
});
