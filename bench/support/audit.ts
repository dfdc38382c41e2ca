/**
 * Counts one client's requests in the API server's audit log between two points of a run
 * (byte offsets from `auditLogSize`), split into writes, cache-bypassing reads (get, list) and
 * watches (counted when they start).
 * @module
 */
import { auditLogSize, readAuditLog, WRITE_VERBS } from '@converge/envtest';

export interface RequestCounts {
  total: number;
  writes: number;
  /** get and list: reads that did not come from the client's cache. */
  reads: number;
  /** Watches opened. */
  watches: number;
  /** "verb resource[/subresource]" → count. */
  byVerb: Record<string, number>;
}

export const auditMark = (path: string): Promise<number> => auditLogSize(path);

export async function countRequests(path: string, fromOffset: number, userAgent: string, namespace?: string): Promise<RequestCounts> {
  const events = await readAuditLog(path, { fromOffset, stage: null, userAgent });
  const counts: RequestCounts = { total: 0, writes: 0, reads: 0, watches: 0, byVerb: {} };
  for (const e of events) {
    if (namespace !== undefined && e.objectRef?.namespace !== undefined && e.objectRef.namespace !== namespace) continue;
    // One event per request: watches when they start, everything else when it completes.
    if (e.verb === 'watch' ? e.stage !== 'ResponseStarted' : e.stage !== 'ResponseComplete') continue;
    counts.total += 1;
    if (WRITE_VERBS.includes(e.verb)) counts.writes += 1;
    else if (e.verb === 'watch') counts.watches += 1;
    else if (e.verb === 'get' || e.verb === 'list') counts.reads += 1;
    const resource = e.objectRef?.resource ?? e.requestURI.split('?')[0];
    const key = `${e.verb} ${resource}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}`;
    counts.byVerb[key] = (counts.byVerb[key] ?? 0) + 1;
  }
  return counts;
}
