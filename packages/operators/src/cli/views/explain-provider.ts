/**
 * `converge explain` for a DigitalHumanProvider: its vendor instance, finalizer, credentials
 * (whether the Secret and key exist, never their values), limits, quotas and account state, as an
 * `Explanation` (`explanation.ts`). Pure: the facts come from the caller.
 * @module
 */
import type { Condition, KubeEvent } from '@converge/runtime';
// The operator's modules one by one, not its index: `converge explain` loads only what it renders (issue 17, goal 5).
import type { DigitalHumanProvider } from '../../operators/provider/api/index.ts';
import { ABANDON_ANNOTATION, DEFAULT_CREDENTIALS_KEY, PROVIDER_API_VERSION, PROVIDER_FINALIZER, PROVIDER_KIND, VENDOR_CREDENTIALS_LABEL } from '../../operators/provider/api/constants.ts';
import { LIMIT_NAMES, conditionsOf, explanation, generationFindings, objectHeader, readyFinding } from './explanation.ts';
import type { Explanation, Finding } from './explanation.ts';

export interface ProviderFacts {
  provider: DigitalHumanProvider;
  /**
   * Whether the credentials Secret and its key exist, and whether the Secret carries the
   * vendor-credentials label (absent: not known); `null` when they could not be read (`error`
   * says why). Never the values.
   */
  credentials: { secretExists: boolean | null; keyPresent: boolean | null; labelled?: boolean; error?: string };
  events: readonly KubeEvent[];
  /** Why the Events could not be read (the reader may not list them: 403), when it could not. */
  eventsUnreadable?: string;
}

export function explainProvider(facts: ProviderFacts): Explanation {
  const p = facts.provider;
  const header = objectHeader(p, PROVIDER_API_VERSION, PROVIDER_KIND, p.status?.observedGeneration);
  const generation = header.generation;
  const conditions = conditionsOf(p.status?.conditions as Condition[] | undefined, generation);
  const ready = conditions.find((c) => c.type === 'Ready');
  const findings: Finding[] = [];
  const deleting = header.deletionTimestamp !== null;
  const finalizer = header.finalizers.includes(PROVIDER_FINALIZER);
  const providerID = p.status?.providerID || null;
  const secret = p.spec?.credentials?.secretRef?.name ?? '';
  const key = p.spec?.credentials?.secretRef?.key ?? DEFAULT_CREDENTIALS_KEY;

  if (deleting) {
    findings.push({
      severity: 'warning',
      message: finalizer
        ? `being deleted: the finalizer ${PROVIDER_FINALIZER} stays until the vendor instance${providerID ? ` ${providerID}` : ''} is deleted${ready?.reason === 'DeletionBlocked' ? ` (blocked: ${ready.message})` : ''}`
        : 'being deleted: the finalizer is gone, the API server removes the object',
    });
  }
  generationFindings(header, conditions, findings);
  readyFinding(ready, findings);
  const creds = facts.credentials;
  if (creds.secretExists === false) {
    findings.push({ severity: 'error', message: `Secret ${secret} does not exist in namespace ${header.namespace} (CredentialsMissing); the operator retries when it appears` });
  } else if (creds.secretExists && creds.keyPresent === false) {
    findings.push({ severity: 'error', message: `Secret ${secret} has no key "${key}" (CredentialsMissing)` });
  } else if (creds.secretExists && creds.labelled === false) {
    findings.push({ severity: 'error', message: `Secret ${secret} is not labelled ${VENDOR_CREDENTIALS_LABEL}=true, so the operator does not read it (CredentialsNotAllowed): kubectl -n ${header.namespace} label secret ${secret} ${VENDOR_CREDENTIALS_LABEL}=true` });
  } else if (creds.secretExists === null) {
    findings.push({ severity: 'info', message: `could not check Secret ${secret}: ${creds.error ?? 'unknown error'}` });
  } else {
    findings.push({ severity: 'ok', message: `Secret ${secret} exists with key "${key}" (value not shown)` });
  }
  if (!deleting && !finalizer && header.observedGeneration !== null) {
    findings.push({ severity: 'warning', message: `the finalizer ${PROVIDER_FINALIZER} is missing: the operator adds it before any vendor call` });
  }
  const instanceEndpoint = p.status?.instanceEndpoint ?? null;
  const createRequestedAt = p.status?.createRequestedAt ?? null;
  if (providerID) {
    findings.push({ severity: 'ok', message: `vendor instance ${providerID}${instanceEndpoint ? ` at ${instanceEndpoint}` : ''}` });
  } else if (createRequestedAt) {
    findings.push({ severity: 'warning', message: `a create may have been sent to ${instanceEndpoint ?? p.spec?.endpoint} at ${createRequestedAt} (recorded before sending), no instance recorded yet: deletion asks the vendor before the finalizer goes` });
  } else if (!deleting) {
    findings.push({ severity: 'warning', message: 'no vendor instance recorded yet (status.providerID is empty); no create was sent' });
  } else {
    findings.push({ severity: 'info', message: 'no create was ever sent: the deletion needs no vendor call' });
  }
  quotaFindings(p, conditions, findings);
  const abandon = p.metadata.annotations?.[ABANDON_ANNOTATION];
  if (abandon !== undefined) {
    findings.push({ severity: 'warning', message: `${ABANDON_ANNOTATION}=${abandon}: on deletion the instance named is given up without cleanup (if it names status.providerID, or the UID when none is recorded)` });
  }

  if (facts.eventsUnreadable) findings.push({ severity: 'info', message: `Events not read: ${facts.eventsUnreadable}` });

  // A change the vendor refused (or still applies) leaves the instance serving: usable, not converged.
  const specApplied = conditions.find((c) => c.type === 'SpecApplied');
  const converged = !deleting && ready?.status === 'True' && ready.current && header.observedGeneration === generation && finalizer && providerID !== null && !(specApplied?.status === 'False' && specApplied.current);
  return {
    ...explanation(header, converged, ready, findings, conditions, facts.events),
    provider: {
      spec: { endpoint: p.spec?.endpoint ?? '', region: p.spec?.region ?? '', displayName: p.spec?.displayName ?? null, credentials: { secretRef: { name: secret, key } } },
      providerID,
      instanceEndpoint,
      createRequestedAt,
      finalizer: { name: PROVIDER_FINALIZER, present: finalizer },
      deleting,
      credentials: { secret, key, secretExists: creds.secretExists, keyPresent: creds.keyPresent, labelled: creds.labelled ?? null, error: creds.error ?? null },
      limits: { desired: { ...p.spec?.limits }, inForce: p.status?.limits ? { ...p.status.limits } : null },
      usage: p.status?.usage ?? null,
      limitedBy: p.status?.limitedBy ?? null,
      usable: p.status?.usable === true,
      recommendation: p.status?.recommendation ?? null,
    },
  };
}

/** What limits the provider, what the vendor refused (a create: Ready; a change: SpecApplied), what a person could do (issue 14, issue 18 item 7). */
function quotaFindings(p: DigitalHumanProvider, conditions: readonly { type: string; status: string; reason: string; message: string; current: boolean }[], findings: Finding[]): void {
  const holds = (type: string) => conditions.find((c) => c.type === type && c.status === 'True');
  const ready = conditions.find((c) => c.type === 'Ready');
  if (ready?.reason === 'VendorRejected') {
    findings.push({ severity: 'error', message: `the vendor refused what it was sent (VendorRejected): ${ready.message}. It is sent again when the spec changes, and otherwise only every provider.rejectedRetrySeconds (10 minutes by default)${/region/.test(ready.message) ? '; spec.region is immutable, so create a new DigitalHumanProvider with a region the vendor accepts' : ''}` });
  }
  const applied = conditions.find((c) => c.type === 'SpecApplied' && c.status === 'False' && c.current);
  if (applied?.reason === 'VendorRejected' && ready?.reason !== 'VendorRejected') {
    const serving = p.status?.usable === true ? `the instance keeps serving as it was (Ready=${ready?.status ?? 'Unknown'}, usable)` : 'the instance is as it was before the change';
    findings.push({ severity: 'error', message: `the vendor refused this generation's change (SpecApplied=False/VendorRejected, kstatus Failed): ${applied.message}. ${serving}; fix the field the vendor names (or have the vendor allow it: a plan upgraded), or set the spec back. It is sent again when the spec changes, and otherwise only every provider.rejectedRetrySeconds (10 minutes by default)` });
  } else if (applied?.reason === 'ApplyFailed') {
    findings.push({ severity: 'warning', message: `this generation's change is not applied yet (SpecApplied=False/ApplyFailed): ${applied.message}` });
  }
  const suspended = holds('AccountSuspended');
  if (suspended) findings.push({ severity: 'error', message: `${suspended.message} (AccountSuspended/${suspended.reason}): pay or resolve it with the vendor; the operator notices the resumption within seconds` });
  const quota = holds('QuotaExhausted');
  if (quota) findings.push({ severity: 'error', message: `${quota.message} (QuotaExhausted): the upstream should use another provider until then, or raise spec.limits.dailyQuota` });
  const rate = holds('RateLimited');
  if (rate) findings.push({ severity: 'warning', message: `${rate.message} (RateLimited): calls are slowed, the provider stays usable` });
  if (holds('ScaleRecommended') && p.status?.recommendation) findings.push({ severity: 'info', message: `recommendation (never acted on): ${p.status.recommendation}` });
  const inForce = p.status?.limits;
  const differ = LIMIT_NAMES.filter((n) => p.spec?.limits?.[n] !== undefined && inForce && inForce[n] !== p.spec.limits![n]);
  if (differ.length) findings.push({ severity: 'warning', message: `limits differ from spec.limits at the last look: ${differ.map((n) => `${n} ${inForce![n]} (spec ${p.spec.limits![n]})`).join(', ')}; the operator sets them at its next look` });
}
