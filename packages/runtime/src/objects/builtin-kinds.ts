/**
 * Descriptors and minimal types for the built-in kinds the runtime and its operators touch.
 * The spec and status types come from `kubernetes-types` (declarations only); metadata is ours,
 * so timestamps stay the strings the API server sends.
 * @module
 */
import type { DeploymentSpec as V1DeploymentSpec, DeploymentStatus as V1DeploymentStatus } from 'kubernetes-types/apps/v1.js';
import type { ServiceSpec as V1ServiceSpec, ServiceStatus as V1ServiceStatus, PodSpec as V1PodSpec, PodStatus as V1PodStatus } from 'kubernetes-types/core/v1.js';
import type { LeaseSpec as V1LeaseSpec } from 'kubernetes-types/coordination/v1.js';
import type { Endpoint as V1Endpoint, EndpointPort as DiscoveryV1EndpointPort } from 'kubernetes-types/discovery/v1.js';
import type { KubeObject } from './types.ts';
import { defineKind } from './resource-kind.ts';

export interface Deployment extends KubeObject { spec?: V1DeploymentSpec; status?: V1DeploymentStatus }
export interface Service extends KubeObject { spec?: V1ServiceSpec; status?: V1ServiceStatus }
export interface Pod extends KubeObject { spec?: V1PodSpec; status?: V1PodStatus }
export interface Lease extends KubeObject { spec?: V1LeaseSpec }
export interface EndpointSlice extends KubeObject {
  addressType: string;
  endpoints: V1Endpoint[];
  ports?: DiscoveryV1EndpointPort[];
}
export interface ConfigMap extends KubeObject { data?: Record<string, string>; binaryData?: Record<string, string> }
export interface Secret extends KubeObject { data?: Record<string, string>; stringData?: Record<string, string>; type?: string }
export interface Namespace extends KubeObject { spec?: { finalizers?: string[] }; status?: { phase?: string } }
export interface ServiceAccount extends KubeObject {}
export interface CustomResourceDefinition extends KubeObject { spec: Record<string, unknown>; status?: Record<string, unknown> }
/** events.k8s.io/v1 Event (only the fields the runtime writes and reads). */
export interface KubeEvent extends KubeObject {
  eventTime: string;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  type: 'Normal' | 'Warning';
  note?: string;
  regarding?: { apiVersion?: string; kind?: string; name?: string; namespace?: string; uid?: string; resourceVersion?: string };
  series?: { count: number; lastObservedTime: string };
  deprecatedCount?: number;
}

export const DeploymentKind = defineKind<Deployment>({ group: 'apps', version: 'v1', kind: 'Deployment', plural: 'deployments', namespaced: true });
export const ServiceKind = defineKind<Service>({ group: '', version: 'v1', kind: 'Service', plural: 'services', namespaced: true });
export const PodKind = defineKind<Pod>({ group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true });
export const SecretKind = defineKind<Secret>({ group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true });
export const ConfigMapKind = defineKind<ConfigMap>({ group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true });
export const NamespaceKind = defineKind<Namespace>({ group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false });
export const ServiceAccountKind = defineKind<ServiceAccount>({ group: '', version: 'v1', kind: 'ServiceAccount', plural: 'serviceaccounts', namespaced: true });
export const LeaseKind = defineKind<Lease>({ group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', plural: 'leases', namespaced: true });
export const EndpointSliceKind = defineKind<EndpointSlice>({ group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice', plural: 'endpointslices', namespaced: true });
export const EventKind = defineKind<KubeEvent>({ group: 'events.k8s.io', version: 'v1', kind: 'Event', plural: 'events', namespaced: true });
export const CustomResourceDefinitionKind = defineKind<CustomResourceDefinition>({ group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition', plural: 'customresourcedefinitions', namespaced: false });
