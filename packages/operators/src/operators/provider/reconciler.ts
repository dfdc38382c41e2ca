/**
 * The DigitalHumanProvider reconciler: keeps one instance in the vendor's API converged to each
 * CR, reports its health in a `Ready` condition, and cleans it up through a finalizer.
 *
 * Guarantees:
 * - **One instance per CR.** The instance is found by `status.providerID`, else by the
 *   idempotency key (the CR's UID), and created — with that key — only when neither finds it.
 *   A lost create response, a crash between create and status write, or a stale cache therefore
 *   never makes a second instance.
 * - **The spec is never written.** Status goes through the status subresource as a merge patch
 *   of the fields the operator owns, to the exact version read; the finalizer is a patch of
 *   `metadata.finalizers` with the read resourceVersion. A spec edit made meanwhile wins (409 →
 *   re-read), it is never reverted.
 * - **Never stuck Terminating because the instance is gone.** A vendor 404 on delete counts as
 *   deleted. While the vendor is unreachable the finalizer stays, Ready says `DeletionBlocked`,
 *   and deletion completes by itself once the vendor answers again.
 * - Tokens come from the referenced Secret and appear in no log, Event or status. Secrets are
 *   cached by metadata only; the referenced one is read on demand (`credentials.ts`).
 *
 * Caveat: deleting the CR's Secret before the CR leaves the operator without a token for the
 * vendor delete; it uses the last token it saw for that Secret (kept in memory only), so a
 * restart in between leaves the CR in `DeletionBlocked` until the Secret is restored.
 * @module
 */
import {
  TemporaryError,
  PermanentError,
  setCondition,
  patchStatus,
  addFinalizer,
  removeFinalizer,
  hasFinalizer,
  toRfc3339,
} from '@converge/runtime';
import type { Clock, EventSink, KubeClient, Request, Result, Store, FaultPoint } from '@converge/runtime';
import {
  DigitalHumanProviderKind,
  PROVIDER_FINALIZER,
  PROVIDER_FIELD_MANAGER,
  DEFAULT_CREDENTIALS_KEY,
  ProviderReason as Reason,
} from './api/index.ts';
import type { DigitalHumanProvider, DigitalHumanProviderStatus } from './api/index.ts';
import type { VendorApi, VendorApis, VendorInstance, VendorFailure } from './vendor-api.ts';
import { asVendorFailure } from './vendor-api.ts';
import { isNoAnswer } from './vendor/index.ts';
import type { VendorRecovery } from './vendor-recovery.ts';
import type { CredentialsReader } from './credentials.ts';

export interface ProviderReconcilerDeps {
  client: KubeClient;
  providers: Store<DigitalHumanProvider>;
  /** Reads the token of the Secret a CR names. */
  credentials: Pick<CredentialsReader, 'token'>;
  vendors: VendorApis;
  events: EventSink;
  /** Told which CRs wait on an unreachable vendor endpoint, so they can be woken when it answers. */
  recovery?: Pick<VendorRecovery, 'blocked' | 'settled'>;
  clock: Clock;
  faultPoint?: FaultPoint;
}

type ReadyStatus = 'True' | 'False' | 'Unknown';

export class ProviderReconciler {
  readonly #d: ProviderReconcilerDeps;
  /** Last token seen per Secret key (`ns/name#key`), for deletions after the Secret is gone. */
  readonly #lastTokens = new Map<string, string>();

  constructor(deps: ProviderReconcilerDeps) {
    this.#d = deps;
  }

  async reconcile(request: Request, signal: AbortSignal): Promise<Result> {
    const dhp = this.#d.providers.get(request.key);
    if (!dhp) {
      this.#d.recovery?.settled(request.key);
      return {};
    }
    if (dhp.metadata.deletionTimestamp) return this.#delete(dhp, request, signal);

    const guarded = await addFinalizer(this.#d.client, DigitalHumanProviderKind, dhp, PROVIDER_FINALIZER, { signal });
    const token = await this.#token(dhp, signal);
    if (!token) {
      await this.#status(guarded, 'False', Reason.CredentialsMissing, this.#credentialsMessage(dhp), signal);
      return {}; // the Secret watch brings it back here when the Secret appears
    }
    const vendor = this.#d.vendors.forEndpoint(dhp.spec.endpoint, token);
    let instance: VendorInstance;
    try {
      instance = await this.#ensure(guarded, vendor, request, signal);
    } catch (err) {
      return this.#vendorFailed(guarded, request, asVendorFailure(err), 'ensure', signal);
    }
    let health: string;
    try {
      health = await vendor.getHealth(instance.id, signal);
    } catch (err) {
      const failure = asVendorFailure(err);
      if (failure.kind === 'NotFound') {
        // Deleted behind our back between the ensure and the health check: look again at once.
        throw new TemporaryError(Reason.EnsureFailed, `instance ${instance.id} vanished; recreating`, { retryAfterMs: 0 });
      }
      return this.#vendorFailed(guarded, request, failure, 'health', signal, instance.id);
    }
    const [ready, reason, message]: [ReadyStatus, string, string] =
      health === 'healthy'
        ? ['True', Reason.ProviderReady, `instance ${instance.id} is healthy`]
        : health === 'degraded'
          ? ['True', Reason.ProviderDegraded, `instance ${instance.id} is degraded`]
          : ['False', Reason.ProviderUnhealthy, `instance ${instance.id} reports ${health}`];
    await this.#status(guarded, ready, reason, message, signal, instance.id);
    this.#d.recovery?.settled(request.key);
    return {};
  }

  /** Finds the instance by providerID, else by idempotency key; creates it only when neither finds it. */
  async #ensure(dhp: DigitalHumanProvider, vendor: VendorApi, request: Request, signal: AbortSignal): Promise<VendorInstance> {
    const key = dhp.metadata.uid!;
    let instance: VendorInstance | undefined;
    const known = dhp.status?.providerID;
    if (known) instance = await vendor.getInstance(known, signal);
    if (!instance) instance = await vendor.findByIdempotencyKey(key, signal);
    if (!instance) {
      this.#d.faultPoint?.('provider:before-create');
      instance = await vendor.createInstance({ region: dhp.spec.region, ...(dhp.spec.displayName ? { displayName: dhp.spec.displayName } : {}) }, key, signal);
      this.#d.faultPoint?.('provider:after-create');
      request.log.info({ providerID: instance.id, region: dhp.spec.region }, 'vendor instance created');
      this.#d.events.normal(dhp, Reason.Created, 'CreateInstance', `vendor instance ${instance.id} created in ${dhp.spec.region}`);
      if (known) this.#d.events.warning(dhp, Reason.Created, 'CreateInstance', `instance ${known} was gone; replaced by ${instance.id}`);
    } else if (dhp.spec.displayName !== undefined && instance.displayName !== dhp.spec.displayName) {
      instance = await vendor.updateInstance(instance.id, { displayName: dhp.spec.displayName }, signal);
      request.log.info({ providerID: instance.id }, 'vendor instance updated');
      this.#d.events.normal(dhp, Reason.Updated, 'UpdateInstance', `displayName of ${instance.id} updated`);
    }
    return instance;
  }

  async #delete(dhp: DigitalHumanProvider, request: Request, signal: AbortSignal): Promise<Result> {
    if (!hasFinalizer(dhp, PROVIDER_FINALIZER)) return {};
    const token = (await this.#token(dhp, signal)) ?? this.#lastTokens.get(this.#secretKey(dhp));
    const known = dhp.status?.providerID;
    if (token) {
      const vendor = this.#d.vendors.forEndpoint(dhp.spec.endpoint, token);
      try {
        // The instance may exist without a recorded providerID (crash between create and status write).
        const id = known ?? (await vendor.findByIdempotencyKey(dhp.metadata.uid!, signal))?.id;
        if (id) {
          this.#d.faultPoint?.('provider:before-delete');
          const existed = await vendor.deleteInstance(id, signal);
          request.log.info({ providerID: id, existed }, existed ? 'vendor instance deleted' : 'vendor instance already gone');
          this.#d.events.normal(dhp, Reason.Deleted, 'DeleteInstance', existed ? `vendor instance ${id} deleted` : `vendor instance ${id} was already gone`);
        }
      } catch (err) {
        const failure = asVendorFailure(err);
        this.#blockedOnVendor(dhp, request, failure);
        await this.#status(dhp, 'False', Reason.DeletionBlocked, `cannot delete the vendor instance yet: ${failure.message}; retrying`, signal, known);
        throw new TemporaryError(Reason.DeletionBlocked, failure.message, failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs });
      }
    } else if (known) {
      await this.#status(dhp, 'False', Reason.DeletionBlocked, `${this.#credentialsMessage(dhp)}; the vendor instance ${known} cannot be deleted without it`, signal, known);
      throw new TemporaryError(Reason.DeletionBlocked, 'credentials missing for deletion');
    }
    this.#d.faultPoint?.('provider:before-finalizer-removal');
    await removeFinalizer(this.#d.client, DigitalHumanProviderKind, dhp, PROVIDER_FINALIZER, { signal });
    this.#d.recovery?.settled(request.key);
    return {};
  }

  /** A failure that says the vendor did not answer: wait for it to answer again (see vendor-recovery.ts). */
  #blockedOnVendor(dhp: DigitalHumanProvider, request: Request, failure: VendorFailure): void {
    if (isNoAnswer(failure.kind)) this.#d.recovery?.blocked(dhp.spec.endpoint, request.key);
  }

  async #vendorFailed(dhp: DigitalHumanProvider, request: Request, failure: VendorFailure, step: string, signal: AbortSignal, providerID?: string): Promise<Result> {
    this.#blockedOnVendor(dhp, request, failure);
    if (failure.kind === 'Unauthorized') {
      await this.#status(dhp, 'False', Reason.Unauthorized, `the vendor rejected the token from Secret ${dhp.spec.credentialsSecretRef.name}`, signal, providerID);
      throw new PermanentError(Reason.Unauthorized, 'vendor rejected the credentials'); // the Secret watch retries on change
    }
    await this.#status(dhp, 'False', Reason.EnsureFailed, `${step} failed: ${failure.message}`, signal, providerID);
    if (failure.kind === 'Invalid') throw new PermanentError(Reason.EnsureFailed, failure.message);
    throw new TemporaryError(Reason.EnsureFailed, failure.message, failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs });
  }

  /** Writes the Ready condition, providerID and observedGeneration when they changed, to the very version read. */
  async #status(dhp: DigitalHumanProvider, ready: ReadyStatus, reason: string, message: string, signal: AbortSignal, providerID?: string): Promise<void> {
    const latest = this.#d.providers.get({ namespace: dhp.metadata.namespace ?? '', name: dhp.metadata.name ?? '' });
    if (!latest || latest.metadata.uid !== dhp.metadata.uid || latest.metadata.generation !== dhp.metadata.generation) {
      throw new TemporaryError('Superseded', 'the object changed while it was reconciled; looking again', { retryAfterMs: 0 });
    }
    const generation = latest.metadata.generation ?? 0;
    const id = providerID ?? latest.status?.providerID;
    const status: DigitalHumanProviderStatus = {
      ...latest.status,
      observedGeneration: generation,
      ...(id ? { providerID: id } : {}),
      conditions: setCondition(latest.status?.conditions, { type: 'Ready', status: ready, reason, message, observedGeneration: generation }, toRfc3339(new Date(this.#d.clock.now()))),
    };
    this.#d.faultPoint?.('provider:before-status');
    await patchStatus(this.#d.client, DigitalHumanProviderKind, latest, status, { fieldManager: PROVIDER_FIELD_MANAGER, signal });
  }

  #secretKey(dhp: DigitalHumanProvider): string {
    const ref = dhp.spec.credentialsSecretRef;
    return `${dhp.metadata.namespace}/${ref.name}#${ref.key ?? DEFAULT_CREDENTIALS_KEY}`;
  }

  async #token(dhp: DigitalHumanProvider, signal: AbortSignal): Promise<string | undefined> {
    const ref = dhp.spec.credentialsSecretRef;
    const token = await this.#d.credentials.token(dhp.metadata.namespace ?? '', ref.name, ref.key ?? DEFAULT_CREDENTIALS_KEY, signal);
    if (!token) return undefined;
    this.#lastTokens.set(this.#secretKey(dhp), token);
    return token;
  }

  #credentialsMessage(dhp: DigitalHumanProvider): string {
    const ref = dhp.spec.credentialsSecretRef;
    return `Secret ${ref.name} with key ${ref.key ?? DEFAULT_CREDENTIALS_KEY} not found in namespace ${dhp.metadata.namespace}`;
  }
}
