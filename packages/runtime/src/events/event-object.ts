/**
 * What one `events.k8s.io/v1` Event says, apart from when and how often the recorder writes it:
 * the reference to the object it is about, its name, its times and the API server's limits on
 * its fields.
 *
 * Guarantees:
 * - `eventObject` never builds an Event the API server refuses for its size: the name stays
 *   within 253 characters, reason and action within 128 bytes, and the note (cut by the caller
 *   with `truncateUtf8`) within `MAX_NOTE_BYTES`. The API server counts these limits in UTF-8
 *   bytes, not characters; each is cut at a character boundary
 *   (`test/integration/events/event-limits-differential.test.ts`).
 * - Names are unique per recorder: the regarding object's name (cut to fit, ending with a letter
 *   or digit), then the creation time in nanoseconds plus a per-recorder sequence number, in hex
 *   (client-go's name, made unique within a millisecond).
 * - An Event about a cluster-scoped object goes to the `default` namespace.
 * @module
 */
import { EventKind, type KubeEvent, type KubeObject } from '../objects/index.ts';

/** What an event is about: an object as read from the API (it should carry apiVersion and kind), or a reference. */
export type EventSubject = KubeObject | ObjectReference;

export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
}

/** The API server rejects notes longer than this (bytes). */
export const MAX_NOTE_BYTES = 1024;
/** The API server rejects a reason, action or reporting instance longer than this (bytes: Go's `len`). */
export const MAX_FIELD_BYTES = 128;

/** The content of a new Event. */
export interface EventContent {
  type: 'Normal' | 'Warning';
  regarding: ObjectReference;
  reason: string;
  action: string;
  /** Already cut to `MAX_NOTE_BYTES`. */
  note: string | undefined;
  reportingController: string;
  reportingInstance: string;
}

/** A new Event with `content`, created at `nowMs` (epoch ms); `seq` tells apart the names of Events created in one millisecond. */
export function eventObject(content: EventContent, nowMs: number, seq: number): KubeEvent {
  const { type, regarding, reason, action, note } = content;
  const nanos = BigInt(Math.floor(nowMs)) * 1_000_000n + BigInt(seq % 1_000_000);
  const namespace = regarding.namespace || 'default';
  return {
    apiVersion: EventKind.apiVersion,
    kind: EventKind.kind,
    metadata: { name: `${namePrefix(regarding.name)}.${nanos.toString(16)}`, namespace },
    eventTime: microTime(nowMs),
    reportingController: content.reportingController,
    reportingInstance: content.reportingInstance,
    action: truncateUtf8(action, MAX_FIELD_BYTES),
    reason: truncateUtf8(reason, MAX_FIELD_BYTES),
    type,
    ...(note === undefined ? {} : { note }),
    regarding,
  };
}

/**
 * The regarding object's name as the start of an Event's name: cut so that the time still fits
 * in 253 characters, and cut back to a letter or digit, since a DNS subdomain's labels end with
 * one (`…-` + `.` + the time would be refused).
 */
function namePrefix(name: string): string {
  return name.slice(0, 253 - 17).replace(/[^A-Za-z0-9]+$/, '') || 'event';
}

/** `event` carrying a series of `count` occurrences, the last at `lastObservedMs` (epoch ms). */
export function withSeries(event: KubeEvent, count: number, lastObservedMs: number): KubeEvent {
  return { ...event, series: { count, lastObservedTime: microTime(lastObservedMs) } };
}

/** The reference an event carries, from an object or a reference. */
export function referenceOf(subject: EventSubject): ObjectReference {
  if ('metadata' in subject && subject.metadata) {
    const m = subject.metadata;
    return {
      ...(subject.apiVersion ? { apiVersion: subject.apiVersion } : {}),
      ...(subject.kind ? { kind: subject.kind } : {}),
      name: m.name ?? '',
      ...(m.namespace ? { namespace: m.namespace } : {}),
      ...(m.uid ? { uid: m.uid } : {}),
      ...(m.resourceVersion ? { resourceVersion: m.resourceVersion } : {}),
    };
  }
  return { ...(subject as ObjectReference) };
}

/** RFC 3339 with microseconds, as `metav1.MicroTime` expects. */
export function microTime(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2024-01-02T03:04:05.678Z
  const micros = String(Math.floor((ms % 1) * 1000)).padStart(3, '0');
  return `${iso.slice(0, -1)}${micros}Z`;
}

/** Cuts `s` to at most `maxBytes` of UTF-8 without splitting a character. */
export function truncateUtf8(s: string, maxBytes: number): string {
  if (Buffer.byteLength(s) <= maxBytes) return s;
  let bytes = 0;
  let end = 0;
  for (const ch of s) {
    const n = Buffer.byteLength(ch);
    if (bytes + n > maxBytes) break;
    bytes += n;
    end += ch.length;
  }
  return s.slice(0, end);
}
