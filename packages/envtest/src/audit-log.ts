/**
 * Reads the API server's JSON-lines audit log (written when the control plane runs with
 * `auditLog: true`), so tests and benchmarks can count requests per verb, resource and client.
 *
 * The policy logs every request at Metadata level without the RequestReceived stage: each
 * request yields exactly one `ResponseComplete` event (long-running ones such as watches also
 * a `ResponseStarted` event). By default only `ResponseComplete` events are returned.
 * The log is appended synchronously by the API server, so a request that has returned is in it.
 * @module
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';

export interface AuditEvent {
  auditID: string;
  stage: 'ResponseStarted' | 'ResponseComplete' | 'Panic' | 'RequestReceived';
  verb: string;
  requestURI: string;
  user: { username: string; groups?: string[] };
  impersonatedUser?: { username: string; groups?: string[] };
  userAgent?: string;
  objectRef?: {
    resource?: string;
    subresource?: string;
    namespace?: string;
    name?: string;
    apiGroup?: string;
    apiVersion?: string;
  };
  responseStatus?: { code?: number; reason?: string; message?: string };
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}

/** Verbs that change state. */
export const WRITE_VERBS: readonly string[] = ['create', 'update', 'patch', 'delete', 'deletecollection'];

export interface AuditFilter {
  /** Default 'ResponseComplete'; null for every stage. */
  stage?: AuditEvent['stage'] | null;
  /** One verb or several. */
  verb?: string | readonly string[];
  /** Only create/update/patch/delete/deletecollection. */
  writesOnly?: boolean;
  /** Plural resource, e.g. 'deployments'. */
  resource?: string;
  /** e.g. 'status'; null means "no subresource". */
  subresource?: string | null;
  apiGroup?: string;
  namespace?: string;
  name?: string;
  /** A string matches User-Agents that start with it; a RegExp is tested against the whole value. */
  userAgent?: string | RegExp;
  /** Authenticated (not impersonated) user name. */
  username?: string;
  /** Only events whose request was received at or after this time. */
  since?: Date;
  /** Start reading at this byte offset (see auditLogSize) instead of the beginning. */
  fromOffset?: number;
}

/** Whether an event passes a filter (the `fromOffset` field is ignored here). */
export function matchesAuditFilter(e: AuditEvent, f: AuditFilter): boolean {
  const stage = f.stage === undefined ? 'ResponseComplete' : f.stage;
  if (stage !== null && e.stage !== stage) return false;
  if (f.verb !== undefined) {
    const verbs = typeof f.verb === 'string' ? [f.verb] : f.verb;
    if (!verbs.includes(e.verb)) return false;
  }
  if (f.writesOnly && !WRITE_VERBS.includes(e.verb)) return false;
  const ref = e.objectRef ?? {};
  if (f.resource !== undefined && ref.resource !== f.resource) return false;
  if (f.subresource !== undefined && (ref.subresource ?? null) !== f.subresource) return false;
  if (f.apiGroup !== undefined && (ref.apiGroup ?? '') !== f.apiGroup) return false;
  if (f.namespace !== undefined && ref.namespace !== f.namespace) return false;
  if (f.name !== undefined && ref.name !== f.name) return false;
  if (f.userAgent !== undefined) {
    const ua = e.userAgent ?? '';
    if (typeof f.userAgent === 'string' ? !ua.startsWith(f.userAgent) : !f.userAgent.test(ua)) return false;
  }
  if (f.username !== undefined && e.user?.username !== f.username) return false;
  if (f.since !== undefined && Date.parse(e.requestReceivedTimestamp) < f.since.getTime()) return false;
  return true;
}

/** Current size of the log in bytes: pass it later as `fromOffset` to read only newer events. */
export async function auditLogSize(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
}

/** Reads and filters the audit log. An incomplete last line (being written) is skipped. */
export async function readAuditLog(path: string, filter: AuditFilter = {}): Promise<AuditEvent[]> {
  const out: AuditEvent[] = [];
  const lines = createInterface({
    input: createReadStream(path, { start: filter.fromOffset ?? 0, encoding: 'utf8' }),
    crlfDelay: Infinity,
  });
  for await (const line of lines) {
    if (!line) continue;
    let e: AuditEvent;
    try {
      e = JSON.parse(line) as AuditEvent;
    } catch {
      continue;
    }
    if (matchesAuditFilter(e, filter)) out.push(e);
  }
  return out;
}

/** Counts events by a key, e.g. `countBy(events, (e) => `${e.verb} ${e.objectRef?.resource}`)`. */
export function countBy(events: readonly AuditEvent[], key: (e: AuditEvent) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of events) {
    const k = key(e);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return counts;
}
