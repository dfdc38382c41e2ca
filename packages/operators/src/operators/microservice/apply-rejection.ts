/**
 * The explanation the Microservice operator gives when the API server refuses one of its child
 * writes as invalid (422): which object, which fields and why (from the answer's causes), and
 * what the user can do about it. A pure function of the error: the reconciler puts it in the
 * `ApplyRejected` status message and the Warning Event.
 * @module
 */
import type { ApiError } from '@converge/runtime';
import { HANDOVER_ANNOTATION } from './api/schema-free.ts';

/**
 * Whether the refusal is about the existing object itself (a field it cannot change in place),
 * which only a change of that object or of the Microservice can lift. Any other refusal may come
 * from the cluster's own rules (an admission policy answers 422 too), which change unseen.
 */
export function refusedInPlace(err: ApiError, existed: boolean): boolean {
  return existed && (err.causes.some((c) => /immutable/i.test(c.message ?? '')) || /immutable/i.test(err.message));
}

/**
 * The explanation of a write the API server refused as invalid (422): which object, which fields
 * and why (from the answer's causes), and what the user can do about it. `retryEveryMs`: how
 * often a refusal that is not `refusedInPlace` is sent again unchanged.
 */
export function rejectionMessage(err: ApiError, kind: string, name: string, existed: boolean, adopting: boolean, retryEveryMs: number): string {
  const causes = err.causes.filter((c) => c.field || c.message);
  const fields = [...new Set(causes.map((c) => c.field).filter((f): f is string => !!f))];
  const details = causes.length
    ? causes.map((c) => `${c.field ? `${c.field}: ` : ''}${shortCause(c.message ?? c.reason ?? '')}`).join('; ')
    : err.message;
  const what = `${kind} ${name}`;
  const verb = existed ? (adopting ? 'adopt (update)' : 'update') : 'create';
  const advice = refusedInPlace(err, existed)
    ? `The operator cannot change ${fields.length ? fields.join(', ') : 'it'} in place: delete ${what} and the operator creates it anew with the desired state${adopting ? `, or remove the ${HANDOVER_ANNOTATION} annotation from it and give the Microservice another name` : ''}`
    : `The operator tries again when the Microservice or ${what} changes, and every ${spelled(retryEveryMs)} (a rule of the cluster, such as an admission policy, may have changed)`;
  return `the API server refused to ${verb} ${what}: ${details}. ${advice}`;
}

/** 600000 → "10 minutes", 3000 → "3 seconds". */
function spelled(ms: number): string {
  const [n, unit] = ms >= 60_000 && ms % 60_000 === 0 ? [ms / 60_000, 'minute'] : [Math.round(ms / 1000), 'second'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** "Invalid value: v1.LabelSelector{…}: field is immutable" → "field is immutable" (values can be long). */
function shortCause(message: string): string {
  const m = /^Invalid value: .*: ([^:]+)$/s.exec(message);
  const text = m ? m[1]!.trim() : message;
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
