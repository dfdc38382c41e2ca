/**
 * The DigitalHumanProvider status, one schema for every served version (ADR 0024), and the rule
 * that ties `spec.endpoint` to it (ADR 0018), which every version's schema carries.
 * @module
 */
import { Type, type Static } from '@sinclair/typebox';
import { ConditionsSchema, celRule } from '@converge/runtime';

export const ProviderStatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(Type.Integer({ description: 'The metadata.generation this status describes.', minimum: 0, format: 'int64' })),
    providerID: Type.Optional(Type.String({ description: "The vendor's ID of the instance.", maxLength: 256 })),
    instanceEndpoint: Type.Optional(
      Type.String({
        description:
          'Where the instance lives: the vendor endpoint of status.providerID, or the one a create was sent to (see createRequestedAt). Lookups, updates and the deletion go there. While it is set, spec.endpoint cannot change.',
        maxLength: 2048,
      }),
    ),
    createRequestedAt: Type.Optional(
      Type.String({
        description:
          "When a create with this object's UID as Idempotency-Key was last sent to instanceEndpoint; written before the request. From then on an instance may exist there even without a providerID, so deletion asks the vendor before the finalizer is released.",
        format: 'date-time',
      }),
    ),
    conditions: Type.Optional(ConditionsSchema('Ready, Reconciling and Stalled (what kstatus reads), each with the generation it was computed for.')),
  },
  { description: 'What the operator observed; written only by the operator through the status subresource.' },
);

/**
 * `spec.endpoint` is immutable once an instance may live at it (a providerID or a create request
 * is recorded): the vendor cannot move an instance, and pointing the object elsewhere would leave
 * it behind unmanaged (ADR 0018). An endpoint that never got a create (a typo, a host that never
 * answered) can still be fixed in place.
 */
const ENDPOINT_RECORDED = "has(oldSelf.status) && (has(oldSelf.status.providerID) || has(oldSelf.status.instanceEndpoint))";
export const ENDPOINT_IMMUTABLE_RULE = celRule(
  `!(${ENDPOINT_RECORDED}) || self.spec.endpoint == oldSelf.spec.endpoint`,
  'spec.endpoint cannot change while a vendor instance may live at the recorded endpoint (status.instanceEndpoint): the vendor cannot move it, and it would be left behind. Delete this DigitalHumanProvider (its instance is deleted with it) and create a new one for the new endpoint.',
  {
    messageExpression:
      "'spec.endpoint cannot change while a vendor instance may live at ' + (has(oldSelf.status.instanceEndpoint) ? oldSelf.status.instanceEndpoint : oldSelf.spec.endpoint) + (has(oldSelf.status.providerID) ? ' (instance ' + oldSelf.status.providerID + ')' : ' (a create was sent there)') + ': the vendor cannot move it, and it would be left behind. Delete this DigitalHumanProvider (its instance is deleted with it) and create a new one for ' + self.spec.endpoint + '.'",
    reason: 'FieldValueForbidden',
    fieldPath: '.spec.endpoint',
  },
);

export type DigitalHumanProviderStatus = Static<typeof ProviderStatusSchema>;
