/**
 * Reading an in-process manager's Prometheus counters, and counting an operator's writes from
 * the API server's audit log (the user agent of `converge run` and of `runOperatorProcess` is
 * `converge-operator/…`; the tests' own client says `converge-test`).
 * @module
 */
import type { Manager } from '@converge/runtime';
import { auditLogSize, readAuditLog, countBy } from '@converge/envtest';
import type { AuditEvent } from '@converge/envtest';

/** Sum of a counter's values, optionally only where every given label matches. */
export async function counter(manager: Manager, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = manager.metrics.registry.getSingleMetric(name);
  if (!metric) return 0;
  const values = (await metric.get()).values;
  return values.filter((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want)).reduce((n, v) => n + v.value, 0);
}

export const AUDIT_LOG = process.env.CONVERGE_TEST_AUDIT_LOG || undefined;

/** A mark in the audit log; `writes()` returns the operator's writes in `ns` since the mark. */
export async function auditMark(ns: string): Promise<{ writes(): Promise<AuditEvent[]>; events(filter?: { userAgent?: string | RegExp }): Promise<AuditEvent[]> }> {
  const offset = AUDIT_LOG ? await auditLogSize(AUDIT_LOG) : 0;
  return {
    writes: async () => (AUDIT_LOG ? readAuditLog(AUDIT_LOG, { fromOffset: offset, writesOnly: true, namespace: ns, userAgent: 'converge-operator' }) : []),
    events: async (filter = {}) => (AUDIT_LOG ? readAuditLog(AUDIT_LOG, { fromOffset: offset, namespace: ns, ...filter }) : []),
  };
}

/** "verb resource[/subresource]" → count, for messages. */
export function summarize(events: readonly AuditEvent[]): string {
  const counts = countBy(events, (e) => `${e.verb} ${e.objectRef?.resource ?? '?'}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''} ${e.responseStatus?.code ?? ''}`);
  return [...counts.entries()].map(([k, v]) => `${k} ×${v}`).join(', ') || 'none';
}
