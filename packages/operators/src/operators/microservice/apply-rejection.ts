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
 * The explanation of a write the API server refused as invalid (422): which object, which fields
 * and why (from the answer's causes), and what the user can do about it.
 */
export function rejectionMessage(err: ApiError, kind: string, name: string, existed: boolean, adopting: boolean): string {
  const causes = err.causes.filter((c) => c.field || c.message);
  const fields = [...new Set(causes.map((c) => c.field).filter((f): f is string => !!f))];
  const details = causes.length
    ? causes.map((c) => `${c.field ? `${c.field}: ` : ''}${shortCause(c.message ?? c.reason ?? '')}`).join('; ')
    : err.message;
  const immutable = causes.some((c) => /immutable/i.test(c.message ?? '')) || /immutable/i.test(err.message);
  const what = `${kind} ${name}`;
  const verb = existed ? (adopting ? 'adopt (update)' : 'update') : 'create';
  const advice = immutable && existed
    ? `The operator cannot change ${fields.length ? fields.join(', ') : 'it'} in place: delete ${what} and the operator creates it anew with the desired state${adopting ? `, or remove the ${HANDOVER_ANNOTATION} annotation from it and give the Microservice another name` : ''}`
    : `The operator tries again when the Microservice or ${what} changes`;
  return `the API server refused to ${verb} ${what}: ${details}. ${advice}`;
}

/** "Invalid value: v1.LabelSelector{…}: field is immutable" → "field is immutable" (values can be long). */
function shortCause(message: string): string {
  const m = /^Invalid value: .*: ([^:]+)$/s.exec(message);
  const text = m ? m[1]!.trim() : message;
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
