/**
 * TypeBox schemas that many custom resources share: the `metav1.Condition` shape and a
 * conditions list keyed by type, plus a helper for CEL rules. They convert to the same OpenAPI
 * that upstream CRDs (Gateway API, cert-manager, controller-gen output) use for these fields.
 * @module
 */
import { loadOnFirstUse } from '../loading/index.ts';
import type { TArray, TObject, TLiteral, TInteger, TOptional, TString, TUnion } from '@sinclair/typebox';
import type { ValidationRule } from './types.ts';

/**
 * TypeBox (≈ 250 modules, ≈ 150 ms) is loaded when a schema is first built, not when the runtime
 * is imported: a process that only reads objects (`converge status`) never loads it.
 */
let typebox: typeof import('@sinclair/typebox') | undefined;
const T = () => (typebox ??= loadOnFirstUse<typeof import('@sinclair/typebox')>('@sinclair/typebox')).Type;
let condition: TConditionSchema | undefined;

/** A CEL rule with the message the user sees when it fails. */
export function celRule(rule: string, message: string, extra: Omit<ValidationRule, 'rule' | 'message'> = {}): ValidationRule {
  return { rule, message, ...extra };
}

export type TConditionSchema = TObject<{
  type: TString;
  status: TUnion<[TLiteral<'True'>, TLiteral<'False'>, TLiteral<'Unknown'>]>;
  observedGeneration: TOptional<TInteger>;
  lastTransitionTime: TString;
  reason: TString;
  message: TString;
}>;

/** `metav1.Condition`, with the same bounds the upstream type declares (built once, on first use). */
export function ConditionSchema(): TConditionSchema {
  const Type = T();
  return (condition ??= Type.Object(
  {
    type: Type.String({
      description: 'Type of condition in CamelCase, e.g. Ready.',
      maxLength: 316,
      pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
    }),
    status: Type.Union([Type.Literal('True'), Type.Literal('False'), Type.Literal('Unknown')], {
      description: 'Status of the condition: True, False or Unknown.',
    }),
    observedGeneration: Type.Optional(
      Type.Integer({ description: 'The .metadata.generation the condition was set for.', minimum: 0, format: 'int64' }),
    ),
    lastTransitionTime: Type.String({ description: 'Last time the status changed.', format: 'date-time' }),
    reason: Type.String({
      description: 'Programmatic identifier in CamelCase for the last transition.',
      minLength: 1,
      maxLength: 1024,
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
    }),
    message: Type.String({ description: 'Human-readable details about the last transition.', maxLength: 32768 }),
  },
  { description: 'A condition, following the Kubernetes API conventions (metav1.Condition).' },
  ));
}

/** `status.conditions`: a list-type map keyed by `type`, so server-side apply merges per condition. */
export function ConditionsSchema(description = 'Current state of the object, one entry per condition type.'): TArray<TConditionSchema> {
  return T().Array(ConditionSchema(), {
    description,
    maxItems: 32,
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['type'],
  });
}
