/**
 * Leader election on a `coordination.k8s.io/v1` Lease, with client-go's semantics, so that of
 * several replicas exactly one reconciles while the others stand by with warm caches.
 *
 * Expected flow (the manager): run `elector.run(signal)` beside everything else; start the
 * runnables that need no leadership (caches, metrics, probes) at once; `await
 * elector.whenLeader(signal)`, take `lead = elector.leadership()`, and start the controllers
 * with `AbortSignal.any([signal, lead])`.
 * When `lead` aborts, leadership is lost: stop reconciling at once, whatever else is going on
 * (a graceful shutdown included), and exit. On shutdown, drain the controllers first, then
 * abort `run`'s signal so the Lease is released only after the last reconcile finished. A
 * process that cannot stop its reconciles calls `abandon()`: the Lease is kept until it expires.
 *
 * Guarantees:
 * - Every decision is measured on the injected clock's **monotonic** time (`Clock.monotonic`):
 *   a wall-clock step, either way and on any replica, neither lets a standby take a live lease
 *   nor lets a leader outlive its renew deadline. The Lease's `acquireTime`/`renewTime` are the
 *   wall-clock time (RFC 3339, microseconds), as the API expects; nobody decides on them.
 * - A candidate tries every `retryPeriod` (plus up to `jitterFactor` of it), and also wakes at the
 *   moment the current holder's lease would expire. It takes the Lease when it is free (released)
 *   or has not changed for its `leaseDurationSeconds` since the candidate *saw* it change
 *   (client-go's observedRecord + observedTime; never the holder's `renewTime`: clock skew and
 *   steps between nodes do not matter, only clock *rate*). Missing Lease: created
 *   (AlreadyExists: another won).
 * - Every write is a compare-and-swap on `resourceVersion` (PUT): two candidates can never both
 *   succeed; the loser sees a Conflict and stays a candidate.
 * - The leader renews every `retryPeriod`. Its term ends — `leadership()` aborts, `isLeader()`
 *   turns false, `onLeaderChange(false)` is called — the moment `renewDeadline` passes since the
 *   *sending* of the last renewal that succeeded, or as soon as a renewal finds another holder.
 *   `isLeader()` reads the deadline from the clock, so it is false from the deadline on even
 *   when a busy event loop runs the term's timer late; an answer that arrives after the deadline
 *   never revives the term.
 * - A lost term ends `run` (as in client-go): the elector does not campaign again and does not
 *   release (the Lease is someone else's, or expires for the standbys). Call `run` again for a
 *   new campaign; the manager instead stops the process.
 * - On abort of `run`'s signal, the term ends first, then (with `releaseOnCancel`, the default)
 *   the Lease is written with no holder and `leaseDurationSeconds: 1`, so a standby takes over on
 *   its next attempt (within about `retryPeriod`). A failed release is logged; standbys then take
 *   over after the lease duration. `abandon()` ends the term and `run` without a release.
 *   `run` never rejects because of API errors.
 * - Defaults are client-go's: lease 15 s, renew deadline 10 s, retry 2 s. The constructor throws
 *   unless leaseDuration > renewDeadline > retryPeriod * (1 + jitterFactor).
 * - Checked by a property test (`leader-election.property.test.ts`): under random latencies, lost
 *   requests and answers, wall-clock steps, stops, crashes and restarts, two electors never
 *   believe they lead at the same instant.
 *
 * Fencing limits (what leader election cannot promise):
 * - It is a lease, not a lock the API server enforces on other writes. Why renewDeadline <
 *   leaseDuration: the leader gives up at renewDeadline (10 s) after its last successful renewal
 *   was sent, while a standby waits leaseDuration (15 s) after it *saw* that renewal, which is
 *   later still. The 5 s gap absorbs scheduling delays and clock-rate differences, so in normal
 *   operation the old leader has stopped before the new one starts.
 * - A process that is paused (SIGSTOP, a long GC, a starved CPU, a suspended VM) for longer than
 *   that gap does not know it has lost: when it runs again, code already past its signal check —
 *   a request in flight, or the rest of a reconcile up to its next `signal` check — may still act
 *   for a moment while the new leader runs. The term's timer fires as soon as the event loop
 *   turns, but cannot run earlier. Reconcilers must therefore stay idempotent and use
 *   `resourceVersion` preconditions where two writers would do harm.
 * - Clock *rate*: monotonic time protects against steps, not against a clock that runs slow or
 *   fast; the lease/renew gap (a third of the lease with the defaults) is the margin for that.
 * @module
 */
export { LeaderElector } from './leader-elector.ts';
export type { LeaderElectorOptions, LeaseClient } from './leader-elector.ts';
export { LeadershipTerm } from './leadership-term.ts';
export { Leases, assessLease, leaseSpecFor, releasedLeaseSpec, candidateDelayMs } from './lease-record.ts';
export type { LeaseObject, LeaseSpec, Observation, Verdict } from './lease-record.ts';
