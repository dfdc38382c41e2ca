/**
 * The deletion of a DigitalHumanProvider: what a reconcile does once the CR has a
 * `deletionTimestamp`, up to releasing the `dhp.example.com/provider-cleanup` finalizer. The
 * reconciler (`reconciler.ts`) hands it the cached CR (`ProviderDeletion.delete`) and shares
 * only its status writer and its token reader with it (`DeletionHost`).
 *
 * Guarantees:
 * - **The finalizer is released only when nothing can be left behind** (ADR 0018): after the
 *   vendor has confirmed that no instance exists for the CR (the recorded one deleted — a 404
 *   counts — and a lookup by idempotency key answered "none", no sooner than `createSettleMs`
 *   after the last create request, which the vendor may still be working on); or without a vendor
 *   call when no create was ever sent (nothing recorded: an endpoint that never answered, missing
 *   credentials from the start); or when a person gives the instance up with
 *   `dhp.example.com/abandon-instance` (ADR 0019; who, what and when go to a Warning Event and
 *   the log). Nothing else skips cleanup: while the vendor cannot confirm, the finalizer stays,
 *   Ready says `DeletionBlocked` (with the command that abandons the instance), and deletion
 *   completes by itself once the vendor answers. What needs a person is `Stalled` (kstatus:
 *   Failed): a token the vendor refuses, an unusable Secret, an endpoint no longer allowed, and a
 *   delete the vendor refuses (a 4xx, asked again every `rejectedRetryMs`).
 * - **Where it looks**: the instance is looked for where it lives (`status.instanceEndpoint`, else
 *   `spec.endpoint`), by `status.providerID` and by the idempotency key (the CR's UID).
 * - **Abandoning is decided on the live object** (one GET): the cache may be behind, and it keeps
 *   no managedFields, which say who set the annotation. A value that names something else is
 *   refused with a Warning Event, and cleanup goes on.
 * - **A create that lands after the release is deleted too** (ADR 0037): before the finalizer
 *   goes, the key of a create younger than the late-create window is stored for the late-create
 *   sweep (`late-creates.ts`); when it cannot be stored, the finalizer stays (`DeletionBlocked`).
 *
 * Assumptions: `DeletionHost.status` writes to the very version read and throws `Superseded`
 * when the cached CR changed meanwhile (the work queue then looks again); the reconciler never
 * runs two reconciles of one CR at once.
 *
 * Caveats: deleting the CR's Secret before the CR leaves the operator without a token for the
 * vendor delete; it uses the last token it saw for that Secret (kept in memory only), so a
 * restart in between leaves the CR in `DeletionBlocked` until the Secret is restored.
 * @module
 */
import { PermanentError, TemporaryError, removeFinalizer, hasFinalizer, isNotFound } from '@converge/runtime';
import type { Clock, EventSink, KubeClient, Request, Result, FaultPoint } from '@converge/runtime';
import { DigitalHumanProviderKind, PROVIDER_FINALIZER, ABANDON_ANNOTATION, ProviderReason as Reason } from './api/schema-free.ts';
import type { DigitalHumanProvider } from './api/schema-free.ts';
import type { VendorApi, VendorApis } from './vendor-api.ts';
import { asVendorFailure } from './vendor-api.ts';
import { isNoAnswer, isVendorError } from './vendor/index.ts';
import type { VendorRecovery } from './vendor-recovery.ts';
import { readAbandonment, describeRequester, abandonCommand } from './abandonment.ts';
import type { Abandonment } from './abandonment.ts';
import type { CredentialsProblem } from './credentials.ts';
import { endpointAllowed } from './allowed-endpoints.ts';
import type { LateCreateSweep } from './late-creates.ts';
import { entryFor } from './late-create-ledger.ts';
import { defaultProviderConfig } from './provider-config.ts';
import type { ProviderFinding } from './status-writer.ts';

/** What a deletion uses of the operator (part of the reconciler's dependencies). */
export interface DeletionDeps {
  client: KubeClient;
  vendors: Pick<VendorApis, 'forEndpoint'>;
  events: EventSink;
  /**
   * Told which CRs wait on an unreachable vendor endpoint, so they can be woken when it answers
   * (a key stops waiting when a reconcile of it ends without this call: `key-holds.ts`).
   */
  recovery?: Pick<VendorRecovery, 'blocked'>;
  clock: Clock;
  /**
   * How long after a create request a vendor's "no instance for this key" is not yet trusted by
   * a deletion (the create may still be in flight or in progress at the vendor). Default 20 s
   * (twice the default vendor call timeout).
   */
  createSettleMs?: number;
  /**
   * Where a deletion records the idempotency key before it releases the finalizer, while a create
   * sent with it may still reach the vendor (`late-creates.ts`). Without it, a create landing
   * later than `createSettleMs` is not cleaned up. An abandonment removes the key stored there
   * before the first create (`forget`), so the given-up instance is not swept.
   */
  lateCreates?: Pick<LateCreateSweep, 'record' | 'windowMs' | 'forget'>;
  /** Base URLs a provider may name (`provider.vendor.allowedEndpoints`); empty or absent: any. */
  allowedEndpoints?: readonly string[];
  /**
   * How long a delete the vendor refused (a 4xx other than 401/404/429) waits before it is asked
   * again (`provider.rejectedRetrySeconds`); default that setting's default.
   */
  rejectedRetryMs?: number;
  faultPoint?: FaultPoint;
}

/** What a deletion shares with the reconcile of a live CR. */
export interface DeletionHost {
  /**
   * The reconciler's status writer: Ready (with Reconciling and Stalled), providerID and
   * observedGeneration, to the very version read.
   */
  status(dhp: DigitalHumanProvider, finding: ProviderFinding & { ready: 'False' }, signal: AbortSignal, log?: Request['log']): Promise<void>;
  /** The token of the Secret the CR names; else the last one this process saw for that Secret. */
  token(dhp: DigitalHumanProvider, signal: AbortSignal): Promise<string | undefined>;
  /** Why `token` gave nothing. */
  credentialsProblem(dhp: DigitalHumanProvider): CredentialsProblem;
}

export class ProviderDeletion {
  readonly #d: DeletionDeps;
  readonly #host: DeletionHost;
  /** When (monotonic) this process first saw each deleting provider's create request, by key. */
  readonly #settling = new Map<string, { uid: string; requestedAt: string; at: number }>();
  readonly #rejectedRetryMs: number;

  constructor(deps: DeletionDeps, host: DeletionHost) {
    this.#d = deps;
    this.#host = host;
    this.#rejectedRetryMs = deps.rejectedRetryMs ?? defaultProviderConfig.rejectedRetryMs;
  }

  /**
   * Deletion: the finalizer goes only when nothing can be left behind (see the module header).
   * The instance is looked for where it lives (`status.instanceEndpoint`), by ID and by key.
   */
  async delete(cached: DigitalHumanProvider, request: Request, signal: AbortSignal): Promise<Result> {
    let dhp = cached;
    if (!hasFinalizer(dhp, PROVIDER_FINALIZER)) return {};
    let abandonment = readAbandonment(dhp);
    if (abandonment?.confirmed) {
      // Skipping cleanup is decided on the live object (the cache may be behind, and it keeps no
      // managedFields, which say who set the annotation).
      let live: DigitalHumanProvider;
      try {
        live = await this.#d.client.get(DigitalHumanProviderKind, { namespace: request.namespace, name: request.name }, { signal });
      } catch (err) {
        if (isNotFound(err)) return {};
        throw err;
      }
      if (live.metadata.uid !== dhp.metadata.uid || !hasFinalizer(live, PROVIDER_FINALIZER)) return {};
      abandonment = readAbandonment(live);
      if (abandonment?.confirmed) return this.#abandon(live, abandonment, request, signal);
      dhp = live;
    }
    if (abandonment) {
      this.#d.events.warning(dhp, Reason.AbandonRejected, 'AbandonInstance', `${ABANDON_ANNOTATION}=${abandonment.value} does not name what would be abandoned (${abandonment.expected}); cleanup goes on`);
    }
    const known = dhp.status?.providerID;
    const requestedAt = dhp.status?.createRequestedAt;
    // Something may exist only if a create was ever sent (recorded before sending) or an instance was seen.
    const mayExist = known !== undefined || requestedAt !== undefined || dhp.status?.instanceEndpoint !== undefined;
    const endpoint = dhp.status?.instanceEndpoint ?? dhp.spec.endpoint;
    const giveUp = `; to give the instance up without cleanup: ${abandonCommand(dhp)}`;
    if (!endpointAllowed(this.#d.allowedEndpoints ?? [], endpoint)) {
      // Judged before the Secret is read: no token goes where the configuration does not allow.
      if (!mayExist) return this.#nothingToClean(dhp, request, signal, `${endpoint} is not among provider.vendor.allowedEndpoints, and no create was ever sent`);
      const message = `the vendor instance${known ? ` ${known}` : ''} lives at ${endpoint}, which provider.vendor.allowedEndpoints does not allow (any more), so it cannot be deleted; add the endpoint back to the operator's configuration${giveUp}`;
      await this.#host.status(dhp, { ready: 'False', reason: Reason.DeletionBlocked, message, providerID: known, permanent: true }, signal, request.log);
      throw new PermanentError(Reason.DeletionBlocked, `the instance's endpoint ${endpoint} is not allowed`);
    }
    const token = await this.#host.token(dhp, signal);
    if (!token) {
      if (!mayExist) return this.#nothingToClean(dhp, request, signal, 'no credentials, and no create was ever sent');
      const problem = this.#host.credentialsProblem(dhp);
      // A missing Secret may be on its way (created by a GitOps tool after its provider); a
      // Secret that is not labelled, or holds no usable token, waits for a person (its change
      // brings the provider back through the Secret watch).
      const permanent = problem.reason !== Reason.CredentialsMissing;
      await this.#host.status(dhp, { ready: 'False', reason: Reason.DeletionBlocked, message: `${problem.message}; the vendor instance${known ? ` ${known}` : ''} at ${endpoint} cannot be deleted without it${giveUp}`, providerID: known, permanent }, signal, request.log);
      if (permanent) throw new PermanentError(Reason.DeletionBlocked, `no usable credentials for the deletion (${problem.reason})`);
      throw new TemporaryError(Reason.DeletionBlocked, 'credentials missing for deletion');
    }
    const vendor = this.#d.vendors.forEndpoint(endpoint, token);
    let deletedAny: boolean;
    try {
      deletedAny = await this.#deleteAll(dhp, vendor, request, signal);
    } catch (err) {
      if (!isVendorError(err) && !(err instanceof TemporaryError)) throw err; // an abort
      const failure = asVendorFailure(err);
      if (!mayExist) return this.#nothingToClean(dhp, request, signal, `the vendor did not confirm (${failure.message}), but no create was ever sent`);
      if (failure.local) {
        // Refused here before any request (an endpoint the client cannot use): retrying changes nothing.
        const message = `the vendor instance${known ? ` ${known}` : ''} at ${endpoint} cannot be deleted: ${failure.message}${giveUp}`;
        await this.#host.status(dhp, { ready: 'False', reason: Reason.DeletionBlocked, message, providerID: known, permanent: true }, signal, request.log);
        throw new PermanentError(Reason.DeletionBlocked, failure.message);
      }
      if (failure.kind === 'Unauthorized') {
        // Retrying will not change the vendor's mind: a person fixes the token (the Secret's
        // change brings the provider back) or gives the instance up.
        const message = `the vendor refuses the token of Secret ${dhp.spec.credentials.secretRef.name} (${failure.message}), so the vendor instance${known ? ` ${known}` : ''} at ${endpoint} cannot be deleted; put a valid token in the Secret${giveUp}`;
        await this.#host.status(dhp, { ready: 'False', reason: Reason.DeletionBlocked, message, providerID: known, permanent: true }, signal, request.log);
        throw new PermanentError(Reason.DeletionBlocked, `the vendor refuses the token for the deletion: ${failure.message}`);
      }
      if (failure.kind === 'Invalid') {
        // The vendor answered, and refused (a 409 "busy", a 422): not a missing answer, and not
        // for this operator to out-wait with backoff. Stalled with its words; asked again after
        // the rejected-retry interval, as refused input is on the live path (it may stop refusing).
        const retrySeconds = Math.round(this.#rejectedRetryMs / 1000);
        const message = `the vendor refuses to delete the vendor instance${known ? ` ${known}` : ''} at ${endpoint}: ${failure.message}; asked again every ${retrySeconds} s${giveUp}`;
        await this.#host.status(dhp, { ready: 'False', reason: Reason.DeletionBlocked, message, providerID: known, permanent: true }, signal, request.log);
        request.log.warn({ endpoint, providerID: known, err: failure.message }, 'the vendor refuses the deletion; asking again later');
        return { requeueAfterMs: this.#rejectedRetryMs };
      }
      // No answer: wait for the endpoint to answer again (see vendor-recovery.ts).
      if (isNoAnswer(failure.kind)) this.#d.recovery?.blocked(endpoint, request.key);
      await this.#host.status(dhp, { ready: 'False', reason: Reason.DeletionBlocked, message: `cannot confirm that the vendor instance${known ? ` ${known}` : ''} at ${endpoint} is gone yet: ${failure.message}; retrying${giveUp}`, providerID: known }, signal, request.log);
      throw new TemporaryError(Reason.DeletionBlocked, failure.message, failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs });
    }
    // A create sent a moment ago may not show in a lookup yet: look once more after it settled.
    const waitMs = this.#settleWaitMs(dhp, requestedAt);
    if (waitMs > 0) {
      const again = new Date(this.#d.clock.now() + waitMs).toISOString();
      await this.#host.status(dhp, { ready: 'False', reason: Reason.DeletionBlocked, message: `no instance found at ${endpoint}, but a create was sent there at ${requestedAt} and may still be in progress; looking again at ${again} before releasing the finalizer${giveUp}`, providerID: known }, signal, request.log);
      return { requeueAfterMs: waitMs };
    }
    await this.#recordReleasedKey(dhp, endpoint, token, request, signal, giveUp);
    // Said at info because no other line would tell this release from the others.
    if (!deletedAny) request.log.info({ idempotencyKey: dhp.metadata.uid, endpoint, createRequestedAt: requestedAt }, 'no vendor instance found by ID or key; releasing the finalizer');
    const released = await this.#release(dhp, request, signal);
    this.#settling.delete(request.key); // kept until released: a failed release waits no settle time again
    return released;
  }

  /**
   * How long a deletion still waits for a create requested at `requestedAt` to show (0: no more).
   * The wall clock on purpose: the request may have been sent by another process (before a
   * crash). But never longer than the settle time from this process's first sight of that request
   * (monotonic): a time "in the future" (the writer's clock ahead, ours stepped back) was written
   * before the create was sent, so the create was sent before that first sight.
   */
  #settleWaitMs(dhp: DigitalHumanProvider, requestedAt: string | undefined): number {
    if (requestedAt === undefined) return 0;
    const key = `${dhp.metadata.namespace}/${dhp.metadata.name}`;
    const settleMs = this.#d.createSettleMs ?? 20_000;
    const now = this.#d.clock.monotonic();
    const known = this.#settling.get(key);
    const seen = known && known.uid === dhp.metadata.uid && known.requestedAt === requestedAt ? known : { uid: dhp.metadata.uid ?? '', requestedAt, at: now };
    this.#settling.set(key, seen);
    const byWallClock = settleMs - (this.#d.clock.now() - Date.parse(requestedAt));
    const byFirstSight = seen.at + settleMs - now;
    const waitMs = Math.ceil(Math.min(Number.isNaN(byWallClock) ? 0 : byWallClock, byFirstSight));
    return waitMs > 0 ? waitMs : 0;
  }

  /** The provider `key` is gone: what its deletion remembered is dropped. */
  forget(key: string): void {
    this.#settling.delete(key);
  }

  /**
   * Before the finalizer goes: the key goes to the late-create sweep while a create sent with it
   * may still reach the vendor. When that cannot be stored, the finalizer stays (DeletionBlocked).
   */
  async #recordReleasedKey(dhp: DigitalHumanProvider, endpoint: string, token: string, request: Request, signal: AbortSignal, giveUp: string): Promise<void> {
    const sweep = this.#d.lateCreates;
    const requestedAt = dhp.status?.createRequestedAt;
    if (!sweep || requestedAt === undefined) return;
    const entry = entryFor(dhp, endpoint, requestedAt, sweep.windowMs);
    if (!(this.#d.clock.now() < Date.parse(entry.until))) return;
    try {
      await sweep.record(entry, token, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      const message = err instanceof Error ? err.message : String(err);
      request.log.warn({ err: message }, 'cannot record the idempotency key for the late-create sweep; the finalizer stays');
      await this.#host.status(dhp, { ready: 'False', reason: Reason.DeletionBlocked, message: `no instance found at ${endpoint}, but the key cannot be recorded for the late-create sweep (${message}); the finalizer stays until it can${giveUp}`, providerID: dhp.status?.providerID }, signal, request.log);
      throw new TemporaryError(Reason.DeletionBlocked, `cannot record the released key: ${message}`);
    }
    request.log.info({ idempotencyKey: entry.uid, until: entry.until }, 'idempotency key recorded for the late-create sweep');
  }

  /** Gives the instance up without cleanup, as a person asked (ADR 0019): audit record first, then the finalizer. */
  async #abandon(dhp: DigitalHumanProvider, abandonment: Abandonment, request: Request, signal: AbortSignal): Promise<Result> {
    // The key stored before the first create must not send the given-up instance to the sweep.
    try {
      await this.#d.lateCreates?.forget(dhp.metadata.uid!, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      const message = err instanceof Error ? err.message : String(err);
      // Said in the status: the person who set the annotation sees why the finalizer stays (the
      // key left in the ledger could have the sweep delete the instance they gave up).
      await this.#host.status(dhp, {
        ready: 'False', reason: Reason.DeletionBlocked, providerID: dhp.status?.providerID,
        message: `the instance is to be abandoned (${ABANDON_ANNOTATION}), but its key cannot be removed from the late-create ledger yet (${message}); the finalizer stays until it can, so that the late-create sweep does not delete the abandoned instance; retrying`,
      }, signal, request.log);
      throw new TemporaryError(Reason.DeletionBlocked, `cannot remove the key from the late-create ledger before abandoning the instance: ${message}`);
    }
    const what = abandonment.providerID ? `vendor instance ${abandonment.providerID}` : `any vendor instance created with key ${dhp.metadata.uid}`;
    const endpoint = dhp.status?.instanceEndpoint ?? dhp.spec.endpoint;
    request.log.warn(
      { providerID: abandonment.providerID, idempotencyKey: dhp.metadata.uid, endpoint, abandonedBy: abandonment.by, annotationSetBy: abandonment.setBy, at: new Date(this.#d.clock.now()).toISOString() },
      'vendor instance abandoned without cleanup; releasing the finalizer',
    );
    this.#d.events.warning(dhp, Reason.InstanceAbandoned, 'AbandonInstance', `${what} at ${endpoint} abandoned without cleanup, confirmed by ${describeRequester(abandonment)}; it may still exist at the vendor and is no longer managed`);
    return this.#release(dhp, request, signal);
  }

  /**
   * Deletes the recorded instance, then every instance the vendor lists under the CR's key, until
   * the lookup answers "none" (a recorded ID can be stale: a replacement created just before a
   * crash is found only by its key). Resolves whether it made a delete call. Throws when the
   * vendor fails, or still lists one after 3 rounds.
   */
  async #deleteAll(dhp: DigitalHumanProvider, vendor: VendorApi, request: Request, signal: AbortSignal): Promise<boolean> {
    const deleteOne = async (id: string) => {
      this.#d.faultPoint?.('provider:before-delete');
      const existed = await vendor.deleteInstance(id, signal);
      request.log.info({ providerID: id, existed }, existed ? 'vendor instance deleted' : 'vendor instance already gone');
      this.#d.events.normal(dhp, Reason.Deleted, 'DeleteInstance', existed ? `vendor instance ${id} deleted` : `vendor instance ${id} was already gone`);
    };
    const known = dhp.status?.providerID;
    if (known) await deleteOne(known);
    for (let round = 0; round < 3; round++) {
      const found = await vendor.findByIdempotencyKey(dhp.metadata.uid!, signal);
      if (!found) return known !== undefined || round > 0;
      await deleteOne(found.id);
    }
    throw new TemporaryError(Reason.DeletionBlocked, `the vendor still lists an instance with key ${dhp.metadata.uid} after deleting it 3 times`);
  }

  /** Releases the finalizer without a vendor call: nothing was ever sent that could have created an instance. */
  async #nothingToClean(dhp: DigitalHumanProvider, request: Request, signal: AbortSignal, why: string): Promise<Result> {
    request.log.info({ endpoint: dhp.spec.endpoint }, `no vendor instance can exist (${why}); releasing the finalizer`);
    this.#d.events.normal(dhp, Reason.NothingToClean, 'DeleteInstance', `no vendor instance to delete: ${why}`);
    return this.#release(dhp, request, signal);
  }

  async #release(dhp: DigitalHumanProvider, request: Request, signal: AbortSignal): Promise<Result> {
    this.#d.faultPoint?.('provider:before-finalizer-removal');
    await removeFinalizer(this.#d.client, DigitalHumanProviderKind, dhp, PROVIDER_FINALIZER, { signal });
    return {};
  }
}
