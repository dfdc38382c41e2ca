/**
 * The manual way out when a vendor is gone for good: a person gives up a DigitalHumanProvider's
 * vendor instance with the `dhp.example.com/abandon-instance` annotation, and the operator then
 * releases the finalizer without cleanup, after recording who, what and when (ADR 0019).
 *
 * What a caller can rely on (all pure):
 * - `readAbandonment(dhp)` says whether the object asks for it, whether the value confirms what
 *   would really be given up (the recorded instance ID, or the object's UID when no ID was ever
 *   recorded: the Idempotency-Key a create may have used), and who asked: the
 *   `dhp.example.com/abandoned-by` text and the field manager and time that set the annotation
 *   (from `metadata.managedFields`; Kubernetes keeps no user name there, the audit log has it).
 * - `abandonCommand(dhp)` is the exact `kubectl annotate` command a blocked deletion shows.
 *
 * Caveat: the annotation is honoured only while the object is being deleted; on a live object it
 * is inert (it does not stop the operator from managing the instance).
 * @module
 */
import { ABANDON_ANNOTATION, ABANDONED_BY_ANNOTATION } from './api/schema-free.ts';
import type { DigitalHumanProvider } from './api/schema-free.ts';

export interface Abandonment {
  /** What the annotation names. */
  value: string;
  /** What it must name: the recorded instance ID, else the object's UID. */
  expected: string;
  confirmed: boolean;
  /** The instance given up, when one is recorded. */
  providerID: string | undefined;
  /** `dhp.example.com/abandoned-by`, trimmed and cut to 256 characters; undefined when absent. */
  by: string | undefined;
  /** The field manager that last set the annotation, with its operation and time, when managedFields say. */
  setBy: { manager: string; operation: string; time: string } | undefined;
}

/** What the object's abandonment annotation asks for; undefined when it carries none. */
export function readAbandonment(dhp: DigitalHumanProvider): Abandonment | undefined {
  const value = dhp.metadata.annotations?.[ABANDON_ANNOTATION]?.trim();
  if (value === undefined) return undefined;
  const providerID = dhp.status?.providerID || undefined;
  const expected = providerID ?? dhp.metadata.uid ?? '';
  const by = dhp.metadata.annotations?.[ABANDONED_BY_ANNOTATION]?.trim().slice(0, 256) || undefined;
  return { value, expected, confirmed: value !== '' && value === expected, providerID, by, setBy: annotationSetBy(dhp, ABANDON_ANNOTATION) };
}

/** Who asked, in one phrase for an Event or a log line. */
export function describeRequester(a: Abandonment): string {
  const manager = a.setBy ? `set by ${a.setBy.manager} (${a.setBy.operation}) at ${a.setBy.time}` : 'setter unknown (no managedFields entry)';
  return a.by ? `"${a.by}", ${manager}` : `${manager}; no ${ABANDONED_BY_ANNOTATION} given`;
}

/** The command that gives this object's instance up (shown while its deletion is blocked). */
export function abandonCommand(dhp: DigitalHumanProvider): string {
  const target = dhp.status?.providerID || dhp.metadata.uid || '<uid>';
  return `kubectl annotate dhp ${dhp.metadata.name} -n ${dhp.metadata.namespace} ${ABANDON_ANNOTATION}=${target} ${ABANDONED_BY_ANNOTATION}="<who and why>"`;
}

interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  time?: string;
  fieldsV1?: { 'f:metadata'?: { 'f:annotations'?: Record<string, unknown> } };
}

/** The newest managedFields entry that owns `metadata.annotations[annotation]`. */
function annotationSetBy(dhp: DigitalHumanProvider, annotation: string): Abandonment['setBy'] {
  let found: Abandonment['setBy'];
  for (const raw of (dhp.metadata.managedFields ?? []) as ManagedFieldsEntry[]) {
    if (!raw?.fieldsV1?.['f:metadata']?.['f:annotations']?.[`f:${annotation}`]) continue;
    const entry = { manager: raw.manager ?? 'unknown', operation: raw.operation ?? 'unknown', time: raw.time ?? 'unknown' };
    if (!found || entry.time > found.time) found = entry;
  }
  return found;
}
