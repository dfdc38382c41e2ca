/**
 * The DigitalHumanProvider reconciler: keeps one instance in the vendor's API converged to each
 * CR (limits included), reports what the upstream needs to choose — `Ready` (usable now),
 * `QuotaExhausted`, `RateLimited`, `AccountSuspended`, `ScaleRecommended`, `status.usage` —
 * and cleans the instance up through a finalizer.
 *
 * Guarantees:
 * - **What it reads of the vendor** comes from the account watch's snapshot when that is fresh
 *   and holds the instance (no vendor call), else from direct calls (ADR 0028).
 * - **Order**: look the instance up (create it when there is none), observe it, then write what
 *   the spec asks that it lacks (`spec-apply.ts`: the display name, the fields `spec.limits` sets
 *   where the vendor's differ; drift repaired with a Warning Event). Ready, `status.usable` and
 *   `limitedBy` describe the instance as observed; whether the vendor holds this generation's
 *   spec is `SpecApplied`, so a refused change never makes a serving instance unusable.
 * - **The write bound**: a state change is written at once, usage figures alone at most every
 *   `usageRefreshMs`; a provider whose vendor figures do not move costs no write. Every status
 *   write, and what it says, is `status-writer.ts`'s.
 * - **Retries**: a transient vendor failure is `EnsureFailed` (`SpecApplied=False/ApplyFailed`
 *   for a write to a serving instance), retried with backoff; input the vendor refuses (4xx) is
 *   `VendorRejected` — Ready's reason for a refused create, `SpecApplied`'s for a refused change —
 *   and is sent again when the spec changes, or after `rejectedRetryMs` (10 minutes) unchanged,
 *   as the vendor may accept it later (a plan upgraded, a region enabled). Only the refused write
 *   waits: a serving instance is observed meanwhile. A suspended account is `AccountSuspended`,
 *   looked at again when the account watch sees it change.
 * - **The account watch** is read before the vendor has taken the token, but the provider becomes
 *   one of its account's users only once the vendor did: its instance found or created, or the
 *   account answered suspended (whose resumption the watch notices). A token the vendor refuses
 *   keeps no account polled.
 * - **One instance per CR.** The instance is found by `status.providerID`, else by the
 *   idempotency key (the CR's UID), and created — with that key — only when neither finds it.
 *   A lost create response, a crash between create and status write, or a stale cache therefore
 *   never makes a second instance.
 * - **Where it lives is recorded before anything can exist.** Before a create request is sent,
 *   `status.instanceEndpoint` and `status.createRequestedAt` are written (conditional on the
 *   version read: a CR being deleted meanwhile gets no create). Once either is set the CRD refuses
 *   a change of `spec.endpoint` (ADR 0018), and every lookup, update and delete goes to the
 *   recorded endpoint.
 * - **Deletion** (`deletion.ts`): the finalizer is released only when nothing can be left behind
 *   (ADR 0018) or a person gave the instance up (ADR 0019); until then Ready says
 *   `DeletionBlocked`. A create that lands after the release is deleted by the late-create sweep
 *   (ADR 0037), and so is the instance of a provider kube-apiserver removed past its finalizer
 *   (kubernetes#77988): before a provider's first create its key is stored for the sweep, which
 *   looks it up only if the provider disappears without its finalizer honoured.
 * - **The spec is never written.** Status goes through the status subresource as a merge patch
 *   of the fields the operator owns, to the exact version read; the finalizer is a patch of
 *   `metadata.finalizers` with the read resourceVersion. A spec edit made meanwhile wins (409 →
 *   re-read), it is never reverted.
 * - Tokens come from the referenced Secret and appear in no log, Event or status. Secrets are
 *   cached by metadata only; the referenced one is read on demand (`credentials.ts`).
 *
 * Caveats: a deletion after the CR's Secret was deleted uses the last token seen for it, kept in
 * memory only (`deletion.ts`). A token for another vendor account in the same Secret is
 * indistinguishable from the instance having been deleted at the vendor (404 either way): the
 * operator creates a replacement and says so in a Warning Event naming the old instance.
 * @module
 */
import { TemporaryError, PermanentError, addFinalizer, hasFinalizer } from '@converge/runtime';
import type { Request, Result, Store } from '@converge/runtime';
import { DigitalHumanProviderKind, PROVIDER_FINALIZER, DEFAULT_CREDENTIALS_KEY, ProviderReason as Reason, ProviderConditionType as QuotaCondition, QuotaReason, SpecAppliedReason } from './api/schema-free.ts';
import type { DigitalHumanProvider } from './api/schema-free.ts';
import type { VendorApi, VendorApis, VendorInstance, VendorFailure } from './vendor-api.ts';
import { asVendorFailure } from './vendor-api.ts';
import { isNoAnswer, isVendorError } from './vendor/index.ts';
import { credentialsProblem } from './credentials.ts';
import { endpointAllowed } from './allowed-endpoints.ts';
import { endpointNotAllowedMessage } from './endpoint-not-allowed.ts';
import type { CredentialsReader } from './credentials.ts';
import { ProviderDeletion } from './deletion.ts';
import type { DeletionDeps } from './deletion.ts';
import type { AccountWatches } from './account-watches.ts';
import type { VendorRecovery } from './vendor-recovery.ts';
import type { VendorAccount } from './vendor/index.ts';
import type { InstanceObservation, RecommendationPolicy } from './usage-status.ts';
import { RefusalGate, SpecApplier, createRefused } from './spec-apply.ts';
import type { SpecApplyOutcome } from './spec-apply.ts';
import { ProviderStatusWriter } from './status-writer.ts';
import type { ProviderFinding } from './status-writer.ts';
import { entryFor } from './late-create-ledger.ts';
import type { LateCreateSweep } from './late-creates.ts';
import { defaultProviderConfig } from './provider-config.ts';
import { KeyHolds } from './key-holds.ts';

/** A first create held back: its key could not be stored for the late-create sweep. */
const LATE_CREATE_NOT_RECORDED = 'LateCreateNotRecorded';

/** What the reconciler uses; the deletion path's share (`DeletionDeps`) is documented in `deletion.ts`. */
export interface ProviderReconcilerDeps extends Omit<DeletionDeps, 'lateCreates' | 'recovery'> {
  /** Told which CRs wait on an unreachable vendor endpoint (`vendor-recovery.ts`), and which no longer do. */
  recovery?: Pick<VendorRecovery, 'blocked' | 'settled'>;
  providers: Store<DigitalHumanProvider>;
  /**
   * The late-create sweep (`late-creates.ts`): a deletion records released keys there, and a
   * provider's first create its key beforehand; each reconcile tells it what the cache holds.
   */
  lateCreates?: Pick<LateCreateSweep, 'record' | 'windowMs' | 'forget' | 'notice'>;
  /** Reads the token of the Secret a CR names. */
  credentials: Pick<CredentialsReader, 'token' | 'lastKnown' | 'release' | 'problem'>;
  vendors: VendorApis;
  /** The account watches (ADR 0028); without them every reconcile asks the vendor directly. */
  watches?: Pick<AccountWatches, 'use' | 'release' | 'forget' | 'peek'>;
  /** The watches' interval: their snapshot stands in for vendor calls while younger than 2 intervals + the call timeout. */
  observeIntervalMs?: number;
  vendorTimeoutMs?: number;
  /** Usage figures alone are written at most this often per provider. Default 30 s. */
  usageRefreshMs?: number;
  /** Input the vendor refused is sent again this often while the spec is unchanged. Default 10 minutes. */
  rejectedRetryMs?: number;
  recommendation?: RecommendationPolicy;
}

export class ProviderReconciler {
  readonly #d: ProviderReconcilerDeps;
  /** The Secret (namespace and name) each provider's token was last read from, to release it when that changes. */
  readonly #secretOf = new Map<string, { namespace: string; name: string }>();
  /** A create the vendor refused for the current generation waits for a spec change or `rejectedRetryMs`. */
  readonly #createGate: RefusalGate;
  /** The apply step (`spec-apply.ts`), with its own gate for refused changes. */
  readonly #applier: SpecApplier;
  /** `deps.rejectedRetryMs`, or the configuration's default. */
  readonly #rejectedRetryMs: number;
  /** Every status write (`status-writer.ts`). */
  readonly #writer: ProviderStatusWriter;

  /** The deletion path (`deletion.ts`): it shares the status writer and the token reader. */
  readonly #deletion: ProviderDeletion;
  /** Each key's place among an account's users and the keys waiting on an endpoint, held only while its latest reconcile took it. */
  readonly #holds: KeyHolds;

  constructor(deps: ProviderReconcilerDeps) {
    this.#d = deps;
    this.#rejectedRetryMs = deps.rejectedRetryMs ?? defaultProviderConfig.rejectedRetryMs;
    this.#createGate = new RefusalGate(deps.clock, this.#rejectedRetryMs);
    this.#applier = new SpecApplier({ clock: deps.clock, events: deps.events, rejectedRetryMs: this.#rejectedRetryMs, ...(deps.watches ? { watches: deps.watches } : {}) });
    this.#holds = new KeyHolds(deps.watches, deps.recovery);
    this.#writer = new ProviderStatusWriter(deps);
    this.#deletion = new ProviderDeletion({ ...deps, recovery: { blocked: (endpoint, key) => this.#holds.blocked(endpoint, key) } }, {
      status: (dhp, finding, signal, log) => this.#writer.finding(dhp, finding, signal, log),
      // A Secret deleted before its provider (a namespace going): its last token, for the cleanup.
      token: async (dhp, signal) => (await this.#token(dhp, signal)) ?? this.#lastToken(dhp),
      credentialsProblem: (dhp) => credentialsProblem(this.#d.credentials, dhp),
    });
  }

  async reconcile(request: Request, signal: AbortSignal): Promise<Result> {
    try {
      return await this.#reconcile(request, signal);
    } finally {
      this.#holds.end(request.key);
    }
  }

  async #reconcile(request: Request, signal: AbortSignal): Promise<Result> {
    const log = request.log;
    const dhp = this.#d.providers.get(request.key);
    this.#d.lateCreates?.notice(request.key, dhp?.metadata.uid);
    if (!dhp) {
      this.#writer.forget(request.key);
      this.#deletion.forget(request.key);
      log.debug('DigitalHumanProvider not in the cache (deleted): nothing to do');
      this.#forgetSecret(request.key);
      this.#createGate.forget(request.key);
      this.#applier.forget(request.key);
      return {};
    }
    log.debug(
      {
        generation: dhp.metadata.generation,
        observedGeneration: dhp.status?.observedGeneration ?? null,
        resourceVersion: dhp.metadata.resourceVersion,
        providerID: dhp.status?.providerID ?? null,
        finalizer: hasFinalizer(dhp, PROVIDER_FINALIZER),
        deleting: Boolean(dhp.metadata.deletionTimestamp),
      },
      `read ${request.key} from the cache`,
    );
    if (dhp.metadata.deletionTimestamp) return this.#deletion.delete(dhp, request, signal);

    const allowed = this.#d.allowedEndpoints ?? [];
    if (!endpointAllowed(allowed, dhp.spec.endpoint)) {
      // Checked before the finalizer and the Secret: nothing was sent, so nothing needs cleaning
      // up, and the token goes only where the platform team allows (vendor-api.ts refuses it too).
      const message = endpointNotAllowedMessage(dhp, allowed);
      await this.#status(dhp, { ready: 'False', reason: Reason.EndpointNotAllowed, message }, request, signal);
      return {}; // a spec change brings it back (the configuration is read at start)
    }
    const guarded = await addFinalizer(this.#d.client, DigitalHumanProviderKind, dhp, PROVIDER_FINALIZER, { signal });
    const token = await this.#token(dhp, signal);
    const ref = dhp.spec.credentials.secretRef;
    if (!token) {
      const problem = credentialsProblem(this.#d.credentials, dhp);
      log.debug(`no credentials from Secret ${ref.name} key ${ref.key ?? DEFAULT_CREDENTIALS_KEY}: ${problem.reason}`);
      await this.#status(guarded, { ready: 'False', reason: problem.reason, message: problem.message }, request, signal);
      return {}; // the Secret watch brings it back here when the Secret changes
    }
    log.debug(`credentials read from Secret ${ref.name} key ${ref.key ?? DEFAULT_CREDENTIALS_KEY}`);
    const recorded = guarded.status?.instanceEndpoint;
    if (recorded !== undefined && recorded !== guarded.spec.endpoint) {
      // The CRD refuses this edit; only a cluster whose CRD lacks the rule gets here.
      const message = `spec.endpoint is ${guarded.spec.endpoint}, but the vendor instance${guarded.status?.providerID ? ` ${guarded.status.providerID}` : ''} lives at ${recorded}: nothing is created at the new endpoint. Set spec.endpoint back to ${recorded}, or delete this DigitalHumanProvider (its instance is deleted there) and create a new one`;
      await this.#status(guarded, { ready: 'False', reason: Reason.EndpointChanged, message }, request, signal);
      throw new PermanentError(Reason.EndpointChanged, message);
    }
    if (this.#createGate.holds(request.key, createRefused(guarded))) return {}; // the create was refused: no instance to observe
    const vendor = this.#d.vendors.forEndpoint(dhp.spec.endpoint, token);
    // The account's latest full read, when fresh: a converged provider then costs no vendor call.
    const watch = this.#holds.peekAccount(dhp.spec.endpoint, token);
    const fleet = watch && watch.ageMs() <= this.#freshMs() ? watch.snapshot() : undefined;
    const seen = guarded.status?.providerID && fleet ? watch!.instance(guarded.status.providerID) : undefined;
    let instance: VendorInstance;
    try {
      instance = await this.#ensure(guarded, vendor, token, request, signal, seen?.instance);
    } catch (err) {
      if (err instanceof TemporaryError && err.reason === LATE_CREATE_NOT_RECORDED && !signal.aborted) {
        // Held back before anything was sent: the status says why, or it would say nothing at all.
        await this.#status(guarded, { ready: 'False', reason: Reason.EnsureFailed, message: `${err.message}; retrying with backoff` }, request, signal);
        throw err;
      }
      if (!isVendorError(err)) throw err; // the intent write (a conflict, a deletion), an abort
      const failure = asVendorFailure(err);
      // A suspended account took the token (the watch notices its resumption); so did a vendor
      // that failed transiently for an instance that exists. A refused token keeps no account polled.
      if (failure.kind === 'AccountSuspended' || (failure.transient && guarded.status?.providerID)) this.#holds.useAccount(dhp.spec.endpoint, token, request.key);
      return this.#vendorFailed(guarded, request, failure, 'ensure', signal);
    }
    // The vendor took the token and the instance exists: the provider is one of its account's users.
    this.#holds.useAccount(dhp.spec.endpoint, token, request.key);
    let observation: InstanceObservation;
    try {
      observation = seen && seen.instance.id === instance.id && fleet
        ? { instanceId: instance.id, region: guarded.spec.region, health: seen.health, account: fleet.account, limits: seen.limits, usage: seen.usage }
        : await this.#observe(vendor, instance.id, guarded.spec.region, fleet?.account, signal);
      log.debug({ providerID: instance.id, fromAccountWatch: Boolean(seen) }, `vendor reports ${observation.health.status}`);
    } catch (err) {
      return this.#observeFailed(guarded, request, err, 'health', signal, instance.id);
    }
    const observedAt = fleet?.observedAt ?? this.#d.clock.now();
    // Then the writes: their failure is SpecApplied's, the observation stands.
    let outcome: SpecApplyOutcome;
    try {
      outcome = await this.#applier.apply(guarded, vendor, instance, observation, request, signal);
    } catch (err) {
      return this.#observeFailed(guarded, request, err, 'update', signal, instance.id);
    }
    if (outcome.failure) this.#blockedOnVendor(guarded, request, outcome.failure);
    const result = await this.#writer.observed(guarded, outcome.observation, observedAt, request, signal, { applied: outcome.applied, ...(outcome.pending ? { pending: outcome.pending } : {}) });
    if (outcome.retry) throw outcome.retry;
    return result;
  }

  /** A failed read or write of an existing instance: gone (looked for again at once), or the vendor's failure. */
  #observeFailed(dhp: DigitalHumanProvider, request: Request, err: unknown, step: string, signal: AbortSignal, id: string): Promise<Result> {
    if (!isVendorError(err)) throw err;
    const failure = asVendorFailure(err);
    if (failure.kind === 'NotFound') {
      // Deleted behind our back between the lookup and now: look again at once.
      throw new TemporaryError(Reason.EnsureFailed, `instance ${id} vanished; recreating`, { retryAfterMs: 0 });
    }
    return this.#vendorFailed(dhp, request, failure, step, signal, id);
  }

  /** How old the account watch's snapshot may be and still stand in for vendor calls. */
  #freshMs(): number {
    return 2 * (this.#d.observeIntervalMs ?? 3_000) + (this.#d.vendorTimeoutMs ?? 10_000);
  }

  /** Health, limits, usage (and the account, unless the watch knows it) by direct calls. */
  async #observe(vendor: VendorApi, id: string, region: string, account: VendorAccount | undefined, signal: AbortSignal): Promise<InstanceObservation> {
    const [health, limits, usage, acct] = await Promise.all([
      vendor.health(id, signal),
      vendor.getLimits(id, signal),
      vendor.getUsage(id, signal),
      account ?? vendor.getAccount(signal),
    ]);
    return { instanceId: id, region, health, limits, usage, account: acct };
  }

  /**
   * Finds the instance by providerID, else by idempotency key; creates it only when neither finds
   * it. `seen` is the instance as the account watch just listed it (no lookup needed then). What
   * an existing instance lacks of the spec is written later, after it is observed (`spec-apply.ts`).
   */
  async #ensure(dhp: DigitalHumanProvider, vendor: VendorApi, token: string, request: Request, signal: AbortSignal, seen?: VendorInstance): Promise<VendorInstance> {
    const key = dhp.metadata.uid!;
    let instance: VendorInstance | undefined = seen;
    const known = dhp.status?.providerID;
    if (known && !instance) instance = await vendor.getInstance(known, signal);
    if (instance) request.log.debug({ providerID: instance.id, fromAccountWatch: Boolean(seen) }, 'vendor instance found by providerID');
    else {
      instance = await vendor.findByIdempotencyKey(key, signal);
      if (instance) request.log.debug({ providerID: instance.id, recorded: known ?? null }, 'vendor instance found by idempotency key');
    }
    if (!instance) {
      request.log.debug(known ? `vendor instance ${known} not found, nor one with the idempotency key; creating` : 'no vendor instance with the idempotency key; creating');
      const requestedAt = await this.#writer.createRequested(dhp, signal);
      if (!known) await this.#recordBeforeFirstCreate(dhp, token, requestedAt, signal);
      this.#d.faultPoint?.('provider:before-create');
      instance = await vendor.createInstance({ region: dhp.spec.region, ...(dhp.spec.displayName ? { displayName: dhp.spec.displayName } : {}) }, key, signal);
      this.#d.faultPoint?.('provider:after-create');
      request.log.info({ providerID: instance.id, region: dhp.spec.region }, 'vendor instance created');
      this.#d.events.normal(dhp, Reason.Created, 'CreateInstance', `vendor instance ${instance.id} created in ${dhp.spec.region}`);
      if (known) this.#d.events.warning(dhp, Reason.Created, 'CreateInstance', `instance ${known} was not found at ${dhp.spec.endpoint}; replaced by ${instance.id} (if the credentials now belong to another vendor account, ${known} may still exist there)`);
    }
    return instance;
  }

  /**
   * Stores the key of a provider's first create for the late-create sweep before the create is
   * sent: should kube-apiserver remove the provider past its finalizer (kubernetes#77988), the
   * sweep finds the instance even when this process dies meanwhile. No store, no create.
   */
  async #recordBeforeFirstCreate(dhp: DigitalHumanProvider, token: string, requestedAt: string, signal: AbortSignal): Promise<void> {
    const sweep = this.#d.lateCreates;
    if (!sweep) return;
    try {
      await sweep.record(entryFor(dhp, dhp.spec.endpoint, requestedAt, sweep.windowMs, { beforeCreate: true }), token, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      const message = err instanceof Error ? err.message : String(err);
      throw new TemporaryError(LATE_CREATE_NOT_RECORDED, `the key of the first create cannot be stored for the late-create sweep yet, so no create is sent: ${message}`);
    }
  }

  /** A failure that says the vendor did not answer: wait for it to answer again (see vendor-recovery.ts). */
  #blockedOnVendor(dhp: DigitalHumanProvider, request: Request, failure: VendorFailure): void {
    if (isNoAnswer(failure.kind)) this.#holds.blocked(dhp.spec.endpoint, request.key);
  }

  async #vendorFailed(dhp: DigitalHumanProvider, request: Request, failure: VendorFailure, step: string, signal: AbortSignal, providerID?: string): Promise<Result> {
    this.#blockedOnVendor(dhp, request, failure);
    if (failure.kind === 'Unauthorized') {
      await this.#status(dhp, { ready: 'False', reason: Reason.Unauthorized, message: `the vendor rejected the token from Secret ${dhp.spec.credentials.secretRef.name}`, providerID }, request, signal);
      throw new PermanentError(Reason.Unauthorized, 'vendor rejected the credentials'); // the Secret watch retries on change
    }
    if (failure.kind === 'Invalid') {
      // The same input would be refused the same way: wait for the spec to change, or for the
      // retry interval (the vendor may change its mind: a plan upgraded, a region enabled; #createGate).
      const field = failure.field ? ` (the vendor names ${failure.field === 'region' ? 'spec.region, which is immutable: create a new DigitalHumanProvider' : failure.field})` : '';
      const message = failure.local
        ? `spec.endpoint cannot be used (${failure.message}); nothing was sent to the vendor. Correct spec.endpoint`
        : `the vendor refused the ${step}: ${failure.message}${field}; sent again when the spec changes, and every ${Math.round(this.#rejectedRetryMs / 1000)} s while it does not (the vendor may accept it later)`;
      // A refused create (or lookup: `ensure`) is SpecApplied's too; a refused read of an existing
      // instance is not (`createRefused` holds only the former back: the instance is observed again).
      const conditions: ProviderFinding['conditions'] = step === 'ensure' ? [[QuotaCondition.SpecApplied, 'False', SpecAppliedReason.VendorRejected, message]] : [];
      await this.#status(dhp, { ready: 'False', reason: Reason.VendorRejected, message, providerID, permanent: true, conditions }, request, signal);
      throw new PermanentError(Reason.VendorRejected, message);
    }
    if (failure.kind === 'AccountSuspended') {
      // Retried with backoff, and at once when the account watch sees the account resumed. The
      // account's own condition says it too: no observation (which sets it) may have come yet.
      const why = `the vendor refused the ${step}: ${failure.message}`;
      await this.#status(dhp, {
        ready: 'False', reason: Reason.AccountSuspended, message: why, providerID,
        conditions: [[QuotaCondition.AccountSuspended, 'True', QuotaReason.Suspended, why]],
      }, request, signal);
      throw new TemporaryError(Reason.AccountSuspended, failure.message);
    }
    await this.#status(dhp, { ready: 'False', reason: Reason.EnsureFailed, message: `${step} failed: ${failure.message}; retrying with backoff`, providerID }, request, signal);
    throw new TemporaryError(Reason.EnsureFailed, failure.message, failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs });
  }

  /** Writes what this reconcile found (`status-writer.ts`). */
  #status(dhp: DigitalHumanProvider, finding: ProviderFinding, request: Request, signal: AbortSignal): Promise<void> {
    return this.#writer.finding(dhp, finding, signal, request.log);
  }

  async #token(dhp: DigitalHumanProvider, signal: AbortSignal): Promise<string | undefined> {
    const namespace = dhp.metadata.namespace ?? '';
    const name = dhp.spec.credentials.secretRef.name;
    const key = `${namespace}/${dhp.metadata.name}`;
    if (this.#secretOf.get(key)?.name !== name) {
      this.#forgetSecret(key); // moved to another Secret: the one before may no longer be named
      this.#secretOf.set(key, { namespace, name });
    }
    return this.#d.credentials.token(namespace, name, dhp.spec.credentials.secretRef.key ?? DEFAULT_CREDENTIALS_KEY, signal);
  }

  /** The provider `key` no longer reads the Secret it last read: the reader keeps it only if another provider names it. */
  #forgetSecret(key: string): void {
    const secret = this.#secretOf.get(key);
    if (!secret) return;
    this.#secretOf.delete(key);
    this.#d.credentials.release(secret.namespace, secret.name);
  }

  #lastToken(dhp: DigitalHumanProvider): string | undefined {
    const ref = dhp.spec.credentials.secretRef;
    return this.#d.credentials.lastKnown(dhp.metadata.namespace ?? '', ref.name, ref.key ?? DEFAULT_CREDENTIALS_KEY);
  }
}

