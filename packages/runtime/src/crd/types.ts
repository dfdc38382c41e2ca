/**
 * Plain JSON shapes of `apiextensions.k8s.io/v1` CustomResourceDefinitions, as the API server
 * accepts them. Only what `defineCustomResource` produces is typed precisely.
 * @module
 */
import type { CustomResourceDefinition } from '../objects/index.ts';

/** A CEL validation rule (`x-kubernetes-validations` entry). */
export type ValidationRule = {
  /** CEL expression; `self` is the value at the node, `oldSelf` the previous one on update. */
  rule: string;
  /** Shown to the user when the rule fails. Always give one: the default names the rule. */
  message?: string;
  messageExpression?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  fieldPath?: string;
  optionalOldSelf?: boolean;
};

/** A structural OpenAPI v3 schema node (`JSONSchemaProps` in apiextensions v1). */
export type JSONSchemaProps = {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  title?: string;
  format?: string;
  default?: unknown;
  example?: unknown;
  nullable?: boolean;
  enum?: unknown[];
  // strings
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  // numbers
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  // arrays
  items?: JSONSchemaProps;
  minItems?: number;
  maxItems?: number;
  // objects
  properties?: Record<string, JSONSchemaProps>;
  required?: string[];
  additionalProperties?: JSONSchemaProps | boolean;
  minProperties?: number;
  maxProperties?: number;
  // value validations (no types or defaults inside, per the structural-schema rules)
  anyOf?: JSONSchemaProps[];
  allOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  // Kubernetes extensions
  'x-kubernetes-validations'?: ValidationRule[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
};

/** One column of `kubectl get` output (`additionalPrinterColumns`). */
export type PrinterColumn = {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  /** JSONPath relative to the object, e.g. `.spec.image`. */
  jsonPath: string;
  description?: string;
  format?: string;
  /** 0 (default) shows in `kubectl get`; higher only with `-o wide`. */
  priority?: number;
};

export type CustomResourceDefinitionNames = {
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  shortNames?: string[];
  categories?: string[];
};

export type CustomResourceDefinitionVersion = {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema: { openAPIV3Schema: JSONSchemaProps };
  subresources?: { status?: Record<string, never> };
  additionalPrinterColumns?: PrinterColumn[];
  /** Fields usable in field selectors (`kubectl get --field-selector spec.region=eu`), Kubernetes ≥ 1.32. */
  selectableFields?: { jsonPath: string }[];
};

/** `spec.conversion`: `None`, or a webhook reached by URL or through a Service. */
export type CustomResourceConversion =
  | { strategy: 'None' }
  | {
      strategy: 'Webhook';
      webhook: {
        conversionReviewVersions: string[];
        clientConfig: { url?: string; caBundle?: string; service?: { namespace: string; name: string; path?: string; port?: number } };
      };
    };

export type CustomResourceDefinitionSpec = {
  group: string;
  names: CustomResourceDefinitionNames;
  scope: 'Namespaced' | 'Cluster';
  versions: CustomResourceDefinitionVersion[];
  conversion?: CustomResourceConversion;
};

/** A complete `apiextensions.k8s.io/v1` CustomResourceDefinition, ready to apply. */
export interface CustomResourceDefinitionV1 extends CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: CustomResourceDefinitionSpec;
}
