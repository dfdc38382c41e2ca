/**
 * The writes of a Microservice's children (its Deployment and Service): which ones a reconcile
 * needs, which it holds back because the API server refused the very same write before, and
 * sending them — both children concurrently.
 *
 * Guarantees:
 * - **Converged means no write.** A child is written only when the update that would be sent
 *   changes something (`containsDesired` of the update body itself, so deciding and building a
 *   write can never disagree; with the child kind's owned fields, `owned-fields.ts`, so a key
 *   added by hand where the operator owns the whole map is a change too), or when it is missing,
 *   or adopted.
 * - **Never delete-and-recreate.** A missing child is created (POST: AlreadyExists if someone
 *   created it since the cache was read, and the next attempt settles ownership again); an
 *   existing one is replaced in place with the resourceVersion read (a Conflict re-reads), with
 *   what others own kept (`update-body.ts`, ADR 0003).
 * - **A refused write is not sent again unchanged.** A write the API server refused as invalid
 *   (422) is remembered per Microservice and child kind with what it was made from (the
 *   Microservice's UID and generation, the child's UID and version: `childVersion`); the same
 *   write is held back until one of them changes, or, unless the child cannot change in place
 *   (`refusedInPlace`), until `refusalRetryMs` passed (an admission policy answers 422 too, and
 *   the cluster can lift it with none of them changing). In memory only: a restart sends it once
 *   more; it saves refused requests and decides nothing the status does not already say.
 * - **A write admission changed is not sent again unchanged.** When what the API server stored
 *   does not contain what was written (a mutating webhook or admission policy changed it, e.g. an
 *   image tag pinned to a digest), the operator accepts the stored object as the outcome of that
 *   write: told once (the write's Event names the fields, `admissionNote`), remembered per
 *   Microservice and child kind with what it was made from (the Microservice's UID and generation,
 *   the rendered child, the stored child's differences from it), and not written again until one
 *   of them changes — a new spec, new platform defaults, or a hand edit of a compared field is
 *   still converged (ADR 0042). Without this, each periodic check sent the same write (and an
 *   Event) for ever, each one a no-op admission undid. In memory only: a restart sends each such
 *   write once more.
 * - `dryRun` sends each write as a server-side dry run first (what an adoption needs: nothing
 *   half-adopted).
 *
 * Caveat: a child admission changes reads as drift to `converge explain`, which cannot see what
 * the operator remembers; the Event and the operator's debug log say the write was accepted.
 * @module
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { DeploymentKind, ServiceKind, isInvalid } from '@converge/runtime';
import type { ApiError, Clock, Deployment, KubeClient, ResourceKind, Service } from '@converge/runtime';
import { MicroserviceReason as Reason, HANDOVER_ANNOTATION, MICROSERVICE_FIELD_MANAGER } from './api/schema-free.ts';
import type { Microservice } from './api/schema-free.ts';
import { containsDesired, differencesForLog, findDifferences } from './contains.ts';
import { deploymentUpdate, serviceUpdate } from './update-body.ts';
import { ownedFieldsOfKind } from './owned-fields.ts';
import { refusedInPlace, rejectionMessage } from './apply-rejection.ts';

/** One child of a Microservice: its kind, as the cache shows it (or missing), and as it should be. */
export type Child = { kind: ResourceKind<Deployment> | ResourceKind<Service>; current: Deployment | Service | undefined; desired: Deployment | Service };
/** A child write this reconcile sends: what it is, whether it adopts, and the child as read. */
export type ChildWrite = { child: Child; owner: string; fingerprint: string; adopting: boolean; before: Deployment | Service | undefined };

/** What sending a reconcile's writes came to. */
export interface SentWrites {
  /** `Deployment web created`, … for what was written. */
  applied: string[];
  /** The Event reasons of what was written (`Created`, `Updated`, `Adopted`). */
  actions: Set<string>;
  /** The first write that failed in a way that is retried, if any. */
  failure?: { err: unknown; write: ChildWrite };
  /** Explanations of the writes refused as invalid. */
  refusals: string[];
}

export interface ChildWritesDeps {
  client: KubeClient;
  clock: Clock;
  /** How often a refused write that may be lifted by the cluster is sent again unchanged (default 600 000 ms). */
  refusalRetryMs?: number;
  faultPoint?: (name: string) => void | Promise<void>;
}

/** How often a refused write the cluster may lift (an admission policy) is sent again unchanged. */
const REFUSAL_RETRY_MS = 10 * 60_000;

/** The kinds of a Microservice's children. */
const CHILD_KINDS: readonly ResourceKind[] = [DeploymentKind, ServiceKind];

export class ChildWrites {
  readonly #d: ChildWritesDeps;
  readonly #refusalRetryMs: number;
  /** The writes refused as invalid, per `refusalKey` (see the module header). */
  readonly #refused = new Map<string, { fingerprint: string; message: string; at: number; retry: boolean }>();
  /** The writes admission changed, per `refusalKey`: what the stored child was made from (see the module header). */
  readonly #admissionChanged = new Map<string, string>();

  constructor(deps: ChildWritesDeps) {
    this.#d = deps;
    this.#refusalRetryMs = deps.refusalRetryMs ?? REFUSAL_RETRY_MS;
  }

  /**
   * The writes `children` need (`adopt`: those taken over with this reconcile), and the
   * explanations of those held back because the same write was refused before.
   */
  plan(ms: Microservice, key: string, children: readonly Child[], adopt: readonly Child[], log: Logger): { writes: ChildWrite[]; refusals: string[] } {
    const name = ms.metadata.name ?? '';
    const writes: ChildWrite[] = [];
    const refusals: string[] = [];
    const owner = `${ms.metadata.uid}/${ms.metadata.generation ?? 0}`;
    for (const child of children) {
      const adopting = adopt.includes(child);
      if (child.current && !adopting && containsDesired(child.current, updateBody(child), ownedFieldsOfKind(child.kind.kind))) {
        log.debug(`${child.kind.kind} matches the desired state; not written`);
        continue;
      }
      if (child.current && !adopting && this.#admissionChanged.get(refusalKey(key, child.kind)) === admissionFingerprint(owner, child)) {
        log.debug(`${child.kind.kind} is as admission made it from the last write of this desired state; not written again`);
        continue;
      }
      const fingerprint = `${owner}/${child.kind.kind}/${child.current?.metadata.uid ?? '-'}/${childVersion(child.current)}`;
      const refused = this.#refused.get(refusalKey(key, child.kind));
      if (refused?.fingerprint === fingerprint && !(refused.retry && this.#d.clock.monotonic() - refused.at >= this.#refusalRetryMs)) {
        log.debug(`${child.kind.kind} not sent again: the API server refused the same write before`);
        refusals.push(refused.message);
        continue;
      }
      if (!child.current) log.debug(`${child.kind.kind} ${name} is missing; creating`);
      else if (adopting) log.debug(`${child.kind.kind} ${name} carries ${HANDOVER_ANNOTATION}=${name}; adopting`);
      else log.debug(differencesForLog(child.current, updateBody(child), 10, ownedFieldsOfKind(child.kind.kind)), `${child.kind.kind} differs from the desired state; updating`);
      writes.push({ child, owner, fingerprint, adopting, before: child.current });
    }
    return { writes, refusals };
  }

  /**
   * Sends each write as a server-side dry run; returns the explanations of those refused as
   * invalid (remembered as refusals). Any other failure is thrown.
   */
  async dryRun(writes: readonly ChildWrite[], key: string, name: string, signal: AbortSignal): Promise<string[]> {
    const trials = await Promise.allSettled(writes.map((w) => send(this.#d.client, w.child, signal, true)));
    const refusals: string[] = [];
    for (const [i, trial] of trials.entries()) {
      if (trial.status === 'fulfilled') continue;
      if (!isInvalid(trial.reason)) throw trial.reason;
      refusals.push(this.#refusal(key, name, writes[i]!, trial.reason as ApiError));
    }
    return refusals;
  }

  /** Sends the writes, concurrently; each written child's `current` becomes what the API server answered. */
  async send(writes: readonly ChildWrite[], key: string, name: string, signal: AbortSignal, log: Logger): Promise<SentWrites> {
    const outcomes = await Promise.allSettled(writes.map(async (w) => {
      const kind = w.child.kind.kind.toLowerCase();
      await this.#d.faultPoint?.(`microservice:before-apply-${kind}`);
      const written = await send(this.#d.client, w.child, signal);
      await this.#d.faultPoint?.(`microservice:after-apply-${kind}`);
      return written;
    }));
    const sent: SentWrites = { applied: [], actions: new Set(), refusals: [] };
    for (const [i, w] of writes.entries()) {
      const outcome = outcomes[i]!;
      const { child } = w;
      if (outcome.status === 'rejected') {
        if (isInvalid(outcome.reason)) sent.refusals.push(this.#refusal(key, name, w, outcome.reason as ApiError));
        else sent.failure ??= { err: outcome.reason, write: w };
        continue;
      }
      child.current = outcome.value;
      this.#refused.delete(refusalKey(key, child.kind));
      const changed = this.#admission(key, w);
      const action = w.adopting ? Reason.Adopted : w.before ? Reason.Updated : Reason.Created;
      log.info({ child: child.kind.kind, action, ...(w.before && !w.adopting ? { differences: differencesForLog(w.before, updateBody({ ...child, current: w.before }), 10, ownedFieldsOfKind(child.kind.kind)).differences } : {}), ...(changed ? { admissionChanged: changed } : {}) }, `${child.kind.kind} ${action.toLowerCase()}`);
      sent.applied.push(`${child.kind.kind} ${name} ${action.toLowerCase()}${changed ? ` ${admissionNote(changed)}` : ''}`);
      sent.actions.add(action);
    }
    return sent;
  }

  /** The Microservice `key` is gone or being deleted: its refusals are forgotten. */
  forget(key: string): void {
    for (const kind of CHILD_KINDS) {
      this.#refused.delete(refusalKey(key, kind));
      this.#admissionChanged.delete(refusalKey(key, kind));
    }
  }

  /**
   * After a write was accepted: the differences between what the API server stored and what the
   * write asked for (remembered, see the module header), or `undefined` when it stored what was
   * asked (anything remembered is forgotten).
   */
  #admission(key: string, w: ChildWrite): { differences: string[]; more: number } | undefined {
    const { child } = w;
    const rules = ownedFieldsOfKind(child.kind.kind);
    const asked = updateBody(child);
    if (containsDesired(child.current, asked, rules)) {
      this.#admissionChanged.delete(refusalKey(key, child.kind));
      return undefined;
    }
    this.#admissionChanged.set(refusalKey(key, child.kind), admissionFingerprint(w.owner, child));
    return differencesForLog(child.current, asked, 3, rules);
  }

  /** Remembers a write the API server refused as invalid; returns its explanation. */
  #refusal(key: string, name: string, w: ChildWrite, err: ApiError): string {
    const message = rejectionMessage(err, w.child.kind.kind, name, w.before !== undefined, w.adopting, this.#refusalRetryMs);
    const retry = !refusedInPlace(err, w.before !== undefined);
    this.#refused.set(refusalKey(key, w.child.kind), { fingerprint: w.fingerprint, message, at: this.#d.clock.monotonic(), retry });
    return message;
  }
}

/** Creates a missing child or replaces an existing one in place (see the module header). */
function send(client: KubeClient, child: Child, signal: AbortSignal, dryRun = false): Promise<Deployment | Service> {
  const opts = { fieldManager: MICROSERVICE_FIELD_MANAGER, signal, ...(dryRun ? { dryRun } : {}) };
  if (child.kind === DeploymentKind) {
    return child.current
      ? client.replace(DeploymentKind, updateBody(child) as Deployment, opts)
      : client.create(DeploymentKind, child.desired as Deployment, opts);
  }
  return child.current
    ? client.replace(ServiceKind, updateBody(child) as Service, opts)
    : client.create(ServiceKind, child.desired as Service, opts);
}

/** The in-place update of an existing child (see `update-body.ts`). */
function updateBody(child: Child): Deployment | Service {
  return child.kind === DeploymentKind
    ? deploymentUpdate(child.current as Deployment, child.desired as Deployment)
    : serviceUpdate(child.current as Service, child.desired as Service);
}

/**
 * What a child admission changed was made from: the Microservice (`owner`: UID and generation),
 * the rendered child (platform defaults can change it with no new generation), the stored child's
 * UID, and how it differs from what a write would ask — the very differences admission left, as
 * long as nobody changed a field the operator compares (a hand edit changes them; the deployment
 * controller's revision annotation, a scaler's replicas or a new status do not).
 */
function admissionFingerprint(owner: string, child: Child): string {
  const differences = child.current ? findDifferences(child.current, updateBody(child), ownedFieldsOfKind(child.kind.kind)) : [];
  const digest = createHash('sha256').update(JSON.stringify(child.desired)).update('\0').update(JSON.stringify(differences));
  return `${owner}/${child.kind.kind}/${child.current?.metadata.uid ?? '-'}/${digest.digest('base64url')}`;
}

/** The Event's words for a write admission changed. */
function admissionNote(changed: { differences: string[]; more: number }): string {
  const more = changed.more > 0 ? ` and ${changed.more} more` : '';
  return `(changed by the cluster's admission: ${changed.differences.join('; ')}${more}; accepted as stored, not written again until the Microservice or it changes)`;
}

/** The refusal key of one child kind of one Microservice. */
function refusalKey(key: string, kind: ResourceKind): string {
  return `${key}#${kind.kind}`;
}

/**
 * The version of a child that decides whether a refused write is worth sending again: a
 * Deployment's `metadata.generation`, which moves with its spec and not with its status (the
 * controller-manager updates that many times, and a new status makes the same write no more
 * acceptable); the resourceVersion of a kind without one (a Service).
 */
function childVersion(child: Deployment | Service | undefined): string {
  if (!child) return '-';
  return child.metadata.generation !== undefined ? `g${child.metadata.generation}` : `rv${child.metadata.resourceVersion ?? '-'}`;
}
