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
    conditions: Type.Optional(
      ConditionsSchema(
        'Ready (usable now: healthy or degraded, account active, quota left), QuotaExhausted, RateLimited, AccountSuspended, ScaleRecommended, and Reconciling and Stalled (what kstatus reads), each with the generation it was computed for.',
      ),
    ),
    usage: Type.Optional(
      Type.Object(
        {
          callsToday: Type.Integer({ description: "Billable calls the vendor accepted in its current quota day.", minimum: 0, format: 'int64' }),
          dailyQuota: Type.Integer({ description: 'The daily quota in force at the vendor.', minimum: 0, format: 'int64' }),
          quotaRemaining: Type.Integer({ description: 'Calls left today; 0 means QuotaExhausted.', minimum: 0, format: 'int64' }),
          throttledRequests: Type.Integer({ description: 'Calls the vendor throttled (over requestsPerMinute) in its last throttleWindowSeconds.', minimum: 0, format: 'int64' }),
          throttleWindowSeconds: Type.Integer({ minimum: 0, format: 'int64' }),
          quotaResetAt: Type.String({ description: "When the vendor's next quota day starts.", format: 'date-time' }),
          observedAt: Type.String({
            description: 'When the operator read these figures. Figures alone are rewritten at most every provider.usageRefreshSeconds (30 s); a state change (a condition flipping) is written at once.',
            format: 'date-time',
          }),
        },
        { description: "The instance's usage as the vendor reports it." },
      ),
    ),
    limits: Type.Optional(
      Type.Object(
        {
          // int64 like the rest: the status shows what the vendor reports, which spec.limits'
          // bounds do not bind (a status field the schema refused would fail every status write).
          maxConcurrency: Type.Integer({ minimum: 0, format: 'int64' }),
          requestsPerMinute: Type.Integer({ minimum: 0, format: 'int64' }),
          dailyQuota: Type.Integer({ minimum: 0, format: 'int64' }),
        },
        { description: 'The limits in force at the vendor (spec.limits where set, the vendor\'s own values elsewhere).' },
      ),
    ),
    limitedBy: Type.Optional(
      Type.String({
        description: "What limits the provider now, in one word: Ready's reason while it is False (AccountSuspended, ProviderUnhealthy, QuotaExhausted, …), else RateLimited while the vendor throttles it; absent when nothing does.",
        maxLength: 64,
      }),
    ),
    usable: Type.Optional(Type.Boolean({ description: 'Ready is True for the current generation: the upstream may send work here. Selectable: --field-selector status.usable=true.' })),
    recommendation: Type.Optional(
      Type.String({
        description: 'Set while ScaleRecommended is True: what a person could do (raise a limit, add a provider). The operator never acts on it.',
        maxLength: 1024,
      }),
    ),
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
