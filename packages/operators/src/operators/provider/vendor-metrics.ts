/**
 * Prometheus metrics of the provider's vendor calls, on the manager's registry:
 *
 * | metric | type | labels |
 * |---|---|---|
 * | `converge_vendor_requests_total` | counter | `operation`, `outcome` (`ok` or the error kind) |
 * | `converge_vendor_request_duration_seconds` | histogram | `operation` (limiter wait included) |
 * | `converge_vendor_endpoints_down` | gauge | – (endpoints that stopped answering, see vendor-recovery.ts) |
 * | `converge_vendor_waiting_objects` | gauge | – (CRs waiting for their endpoint to answer again) |
 * | `converge_vendor_recovery_wakes_total` | counter | – (CRs re-queued because their endpoint answered again, probes included) |
 * | `converge_vendor_late_instances_deleted_total` | counter | – (instances created after their provider's finalizer was released, deleted by the late-create sweep) |
 * | `converge_vendor_late_create_keys` | gauge | – (keys the late-create sweep still looks up, unreadable entries included; 0: no late create can still be caught, see the README's Uninstalling; NaN before the ledger is read) |
 *
 * No endpoint label: endpoints come from CR specs, so their number is the users' to choose.
 * Every series exists from the start: requests (outcome `ok`) and durations at zero for every
 * operation, so dashboards and alerts never see "no data" before the first call.
 * @module
 */
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import { VENDOR_OPERATION_NAMES, type VendorCallEvent } from './vendor/index.ts';
import type { VendorRecovery } from './vendor-recovery.ts';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface VendorMetrics {
  call(event: VendorCallEvent): void;
  lateCreateDeleted(): void;
  /** Where `converge_vendor_late_create_keys` is read from at scrape time (NaN while it answers undefined, and until given). */
  lateCreateKeysFrom(count: () => number | undefined): void;
}

export function registerVendorMetrics(registry: Registry, recovery: Pick<VendorRecovery, 'stats'>): VendorMetrics {
  const registers = [registry];
  const requests = new Counter({ name: 'converge_vendor_requests_total', help: 'Vendor API calls by operation and outcome', labelNames: ['operation', 'outcome'], registers });
  const duration = new Histogram({ name: 'converge_vendor_request_duration_seconds', help: 'Vendor API call duration, limiter wait included', labelNames: ['operation'], buckets: BUCKETS, registers });
  for (const operation of VENDOR_OPERATION_NAMES) {
    requests.inc({ operation, outcome: 'ok' }, 0);
    duration.zero({ operation });
  }
  new Gauge({ name: 'converge_vendor_endpoints_down', help: 'Vendor endpoints that stopped answering (3 calls in a row without an answer)', registers, collect() { this.set(recovery.stats().downEndpoints); } });
  new Gauge({ name: 'converge_vendor_waiting_objects', help: 'Objects waiting for their vendor endpoint to answer again', registers, collect() { this.set(recovery.stats().blocked); } });
  new Counter({
    name: 'converge_vendor_recovery_wakes_total',
    help: 'Objects re-queued because their vendor endpoint answered again (probes included)',
    registers,
    collect() {
      this.reset();
      this.inc(recovery.stats().woken);
    },
  });
  const late = new Counter({ name: 'converge_vendor_late_instances_deleted_total', help: "Vendor instances created after their provider's finalizer was released, deleted by the late-create sweep", registers });
  let lateKeys = (): number | undefined => undefined;
  new Gauge({
    name: 'converge_vendor_late_create_keys',
    help: 'Idempotency keys the late-create sweep still looks up (providers being created or deleted within the window, and ledger entries it cannot read); 0 when no late vendor create can still be caught; NaN until this replica has read the ledger (a standby)',
    registers,
    collect() { this.set(lateKeys() ?? Number.NaN); },
  });
  return {
    lateCreateDeleted: () => late.inc(),
    lateCreateKeysFrom: (count) => void (lateKeys = count),
    call(event) {
      requests.inc({ operation: event.operation, outcome: event.outcome });
      duration.observe({ operation: event.operation }, event.durationMs / 1000);
    },
  };
}
