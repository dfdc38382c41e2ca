/**
 * One definition of a custom resource yields both its `ResourceKind` (with the TypeScript type of
 * its objects, derived from the TypeBox schema) and its `apiextensions.k8s.io/v1` CRD.
 * @module
 */
import type { Static, TObject, TString } from '@sinclair/typebox';
import type { KubeObject, ResourceKind } from '../objects/index.ts';
import { defineKind } from '../objects/index.ts';
import { SchemaConversionError, toStructuralSchema } from './structural-schema.ts';
import type { CustomResourceDefinitionV1, CustomResourceDefinitionVersion, JSONSchemaProps, PrinterColumn } from './types.ts';

/** The object type a version schema describes: a `KubeObject` plus the schema's fields (spec, status). */
export type CustomResourceOf<S extends TObject> = KubeObject & Static<S>;

export interface CustomResourceVersionInput<S extends TObject = TObject> {
  /** e.g. `v1alpha1`. */
  name: string;
  served: boolean;
  storage: boolean;
  /** The object's fields besides apiVersion/kind/metadata, usually `spec` and `status`.
   *  Root-level `x-kubernetes-validations` on this object become root CEL rules (they may read
   *  `self.metadata.name`). */
  schema: S;
  /** Restrictions on `metadata.name`, the only metadata field a CRD schema may restrict: a string
   *  schema with `maxLength`, `pattern` and CEL rules (`self` is the name). */
  metadataName?: TString;
  printerColumns?: readonly PrinterColumn[];
  /**
   * Fields clients may select on (`--field-selector spec.region=eu`; Kubernetes ≥ 1.32): simple
   * JSON paths without array notation, e.g. `.spec.region` or `.status.usable`, to string,
   * boolean or integer fields, never into metadata.
   */
  selectableFields?: readonly string[];
  subresources?: { status?: boolean };
  deprecated?: boolean;
  deprecationWarning?: string;
}

export interface CustomResourceInput<S extends TObject> {
  group: string;
  kind: string;
  /** Lower-case plural used in URLs and the CRD name, e.g. `microservices`. */
  plural: string;
  /** Defaults to the lower-cased kind. */
  singular?: string;
  /** Defaults to `<Kind>List`. */
  listKind?: string;
  shortNames?: readonly string[];
  categories?: readonly string[];
  scope: 'Namespaced' | 'Cluster';
  /** The first version's schema types the returned `kind`; list the version operators use first. */
  versions: readonly [CustomResourceVersionInput<S>, ...CustomResourceVersionInput[]];
  /**
   * How the API server converts between versions: through the webhook Service named here (path
   * default `/convert`, port default 443; the `caBundle` is injected at install time by
   * `injectCaBundle` or cert-manager). Required when more than one version is served, because
   * `None` only rewrites `apiVersion` and is wrong as soon as the schemas differ.
   */
  conversionWebhook?: { service: { namespace: string; name: string; path?: string; port?: number } };
  /** Labels and annotations for the CRD object itself. */
  labels?: Readonly<Record<string, string>>;
  annotations?: Readonly<Record<string, string>>;
}

export interface DefinedCustomResource<T extends KubeObject> {
  /** Descriptor for the first listed version, typed by its schema. */
  readonly kind: ResourceKind<T>;
  /** Descriptors for every version, by version name. */
  readonly kinds: Readonly<Record<string, ResourceKind>>;
  /** The CRD to install. Treat it as read-only; clone before changing it. */
  readonly crd: CustomResourceDefinitionV1;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LOWER_NAME = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const KIND = /^[A-Z][A-Za-z0-9]*$/;
const VERSION = /^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$/;
const RESERVED_ROOT_FIELDS = ['apiVersion', 'kind', 'metadata'];

/**
 * Builds the kind descriptor and the CRD. Throws (`Error` or `SchemaConversionError`) when the
 * definition would be rejected by the API server, so mistakes surface at import time.
 * Pure and deterministic: the same input gives a deeply equal CRD.
 */
export function defineCustomResource<S extends TObject>(input: CustomResourceInput<S>): DefinedCustomResource<CustomResourceOf<S>> {
  const { group, kind, plural } = input;
  const singular = input.singular ?? kind.toLowerCase();
  const where = `custom resource ${plural}.${group}`;
  if (!DNS_SUBDOMAIN.test(group) || !group.includes('.') || group.length > 253) throw new Error(`${where}: group must be a DNS subdomain with a dot`);
  if (!KIND.test(kind)) throw new Error(`${where}: kind ${JSON.stringify(kind)} must be CamelCase`);
  for (const name of [plural, singular, ...(input.shortNames ?? []), ...(input.categories ?? [])]) {
    if (!LOWER_NAME.test(name) || name.length > 63) throw new Error(`${where}: ${JSON.stringify(name)} must be a lower-case DNS label`);
  }
  if (input.versions.length === 0) throw new Error(`${where}: at least one version`);
  const names = new Set<string>();
  for (const v of input.versions) {
    if (!VERSION.test(v.name)) throw new Error(`${where}: version ${JSON.stringify(v.name)} must look like v1, v1beta1 or v1alpha1`);
    if (names.has(v.name)) throw new Error(`${where}: version ${v.name} is listed twice`);
    names.add(v.name);
  }
  if (input.versions.filter((v) => v.storage).length !== 1) throw new Error(`${where}: exactly one version must be the storage version`);
  if (!input.versions.some((v) => v.served)) throw new Error(`${where}: at least one version must be served`);

  if (input.versions.filter((v) => v.served).length > 1 && !input.conversionWebhook) {
    throw new Error(`${where}: several versions are served, so a conversion webhook is needed (conversionWebhook)`);
  }
  const versions = input.versions.map((v) => versionFor(v, where));
  const crd: CustomResourceDefinitionV1 = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${plural}.${group}`,
      ...(input.labels ? { labels: { ...input.labels } } : {}),
      ...(input.annotations ? { annotations: { ...input.annotations } } : {}),
    },
    spec: {
      group,
      names: {
        kind,
        listKind: input.listKind ?? `${kind}List`,
        plural,
        singular,
        ...(input.shortNames?.length ? { shortNames: [...input.shortNames] } : {}),
        ...(input.categories?.length ? { categories: [...input.categories] } : {}),
      },
      scope: input.scope,
      versions,
      ...(input.conversionWebhook
        ? {
            conversion: {
              strategy: 'Webhook' as const,
              webhook: {
                conversionReviewVersions: ['v1'],
                clientConfig: { service: { path: '/convert', port: 443, ...input.conversionWebhook.service } },
              },
            },
          }
        : {}),
    },
  };

  const namespaced = input.scope === 'Namespaced';
  const kinds: Record<string, ResourceKind> = {};
  for (const v of input.versions) kinds[v.name] = defineKind({ group, version: v.name, kind, plural, namespaced, statusSubresource: v.subresources?.status === true });
  const first = input.versions[0];
  return Object.freeze({
    kind: kinds[first.name] as ResourceKind<CustomResourceOf<S>>,
    kinds: Object.freeze(kinds),
    crd,
  });
}

function versionFor(v: CustomResourceVersionInput, where: string): CustomResourceDefinitionVersion {
  const out: CustomResourceDefinitionVersion = {
    name: v.name,
    served: v.served,
    storage: v.storage,
    ...(v.deprecated ? { deprecated: true } : {}),
    ...(v.deprecationWarning ? { deprecationWarning: v.deprecationWarning } : {}),
    schema: { openAPIV3Schema: rootSchema(v.schema, `${where} ${v.name}`, v.metadataName) },
  };
  if (v.subresources?.status) out.subresources = { status: {} };
  if (v.printerColumns?.length) {
    for (const c of v.printerColumns) {
      if (!c.jsonPath.startsWith('.')) throw new Error(`${where}: printer column ${c.name} jsonPath must start with "."`);
    }
    out.additionalPrinterColumns = v.printerColumns.map((c) => ({ ...c }));
  }
  if (v.selectableFields?.length) {
    // As kube-apiserver validates them: at most 8, each once, each a path the schema has to a
    // string, boolean or integer field.
    if (v.selectableFields.length > 8) throw new Error(`${where} ${v.name}: at most 8 selectable fields (the API server refuses more); ${v.selectableFields.length} given`);
    const seen = new Set<string>();
    for (const path of v.selectableFields) {
      if (!/^(\.[A-Za-z_][A-Za-z0-9_]*)+$/.test(path) || path.startsWith('.metadata.')) {
        throw new Error(`${where}: selectable field ${path} must be a simple path like .spec.region (no array notation, not into metadata)`);
      }
      if (seen.has(path)) throw new Error(`${where} ${v.name}: selectable field ${path} is listed twice`);
      seen.add(path);
      let at: JSONSchemaProps | undefined = out.schema.openAPIV3Schema;
      for (const name of path.slice(1).split('.')) at = at?.properties?.[name];
      if (!at) throw new Error(`${where} ${v.name}: selectable field ${path}: the schema has no such field`);
      if (at.type !== 'string' && at.type !== 'boolean' && at.type !== 'integer') {
        throw new Error(`${where} ${v.name}: selectable field ${path}: a selectable field must be a string, boolean or integer (this one is ${at.type ?? 'untyped'})`);
      }
    }
    out.selectableFields = v.selectableFields.map((jsonPath) => ({ jsonPath }));
  }
  return out;
}

/**
 * The whole object's schema: apiVersion, kind, metadata (an opaque `type: object`, as the API
 * server requires) and the version schema's own fields.
 */
export function rootSchema(schema: TObject, where = '', metadataName?: TString): JSONSchemaProps {
  let converted: JSONSchemaProps;
  try {
    converted = toStructuralSchema(schema);
  } catch (error) {
    if (error instanceof SchemaConversionError) throw new SchemaConversionError(error.path, `${where}: ${error.message}`);
    throw error;
  }
  if (converted.type !== 'object') throw new Error(`${where}: the version schema must be an object`);
  for (const field of RESERVED_ROOT_FIELDS) {
    if (converted.properties?.[field]) throw new Error(`${where}: the schema must not declare ${field}; it is added for you`);
  }
  const extra = new Set(Object.keys(converted));
  for (const allowed of ['type', 'description', 'properties', 'required', 'x-kubernetes-validations']) extra.delete(allowed);
  if (extra.size > 0) throw new Error(`${where}: the root schema may not carry ${[...extra].join(', ')}`);
  return {
    ...(converted.description ? { description: converted.description } : {}),
    type: 'object',
    properties: {
      apiVersion: {
        description: 'APIVersion defines the versioned schema of this representation of an object.',
        type: 'string',
      },
      kind: {
        description: 'Kind is a string value representing the REST resource this object represents.',
        type: 'string',
      },
      metadata: metadataName ? { type: 'object', properties: { name: metadataNameSchema(metadataName, where) } } : { type: 'object' },
      ...converted.properties,
    },
    ...(converted.required ? { required: converted.required } : {}),
    ...(converted['x-kubernetes-validations'] ? { 'x-kubernetes-validations': converted['x-kubernetes-validations'] } : {}),
  };
}

function metadataNameSchema(schema: TString, where: string): JSONSchemaProps {
  const converted = toStructuralSchema(schema, '.metadata.name');
  if (converted.type !== 'string') throw new Error(`${where}: metadataName must be a string schema`);
  const allowed = new Set(['type', 'description', 'minLength', 'maxLength', 'pattern', 'x-kubernetes-validations']);
  const extra = Object.keys(converted).filter((k) => !allowed.has(k));
  if (extra.length > 0) throw new Error(`${where}: metadata.name may not carry ${extra.join(', ')}`);
  return converted;
}
