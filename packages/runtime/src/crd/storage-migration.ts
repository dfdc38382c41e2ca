/**
 * Storage migration for a CRD: rewrite every stored object in the storage version, then drop the
 * other versions from `status.storedVersions` — what kube-storage-version-migrator does, for one
 * CRD at a time, with the state kept on the CRD itself so that a stopped run resumes.
 *
 * Expected flow: after a new storage version is rolled out (and its conversion webhook serves),
 * `migrateStorage` lists the objects page by page in the storage version and writes each one back
 * unchanged with its resourceVersion (an update the API server stores in the storage version),
 * records progress in the CRD annotation `STORAGE_MIGRATION_ANNOTATION` after every page, and, when
 * every page is done, sets `status.storedVersions` to `[storage version]`.
 *
 * Guarantees:
 * - idempotent: an object already stored in the storage version is written back byte-identical,
 *   which the API server turns into no etcd write; running it again changes nothing;
 * - safe while controllers run: a Conflict means someone else wrote the object since it was read,
 *   which stored it in the storage version already: counted as migrated, never retried over their
 *   change; an object deleted meanwhile is skipped;
 * - resumable: a run that stops (signal, crash) resumes from the last recorded page; an expired
 *   continue token restarts the listing (idempotent, so only time is lost);
 * - never drops a version that may still be stored: storedVersions changes only after a complete
 *   pass with no failed object, and only if the CRD's spec did not change since the pass began
 *   (its `generation`: the storage version may have moved away and back, and objects written
 *   meanwhile be stored in the other version where the pass had already been). Otherwise it throws
 *   `StorageMigrationError` saying which objects or what changed; a recorded run of an older
 *   generation is not resumed (a fresh pass starts).
 * - writes nothing before the API server stores in the storage version: kube-apiserver swaps a
 *   CRD's storage when its own informer sees the change, a moment after the CRD was written, and
 *   a rewrite in between is stored in the old version. A pass starts once discovery publishes the
 *   storage version's `storageVersionHash` (as kube-storage-version-migrator waits for it).
 * Caveats: rate limits are the client's (`qps`/`burst` of the `KubeClient` given); RBAC: list and
 * update on the resource, get/patch on the CRD and patch on `customresourcedefinitions/status`
 * (discovery is open to every authenticated user). With several API servers, discovery answers
 * for the one asked; one still holding the old storage is not seen.
 * @module
 */
import { createHash } from 'node:crypto';
import { CustomResourceDefinitionKind, defineKind } from '../objects/index.ts';
import type { KubeObject } from '../objects/index.ts';
import type { KubeClient } from '../client/index.ts';
import { ApiError, isConflict, isGone, isNotFound } from '../client/index.ts';
import { systemClock } from '../clock/index.ts';
import type { Clock } from '../clock/index.ts';

export const STORAGE_MIGRATION_ANNOTATION = 'converge.dev/storage-migration';

export interface StorageMigrationProgress {
  crd: string;
  /** The storage version objects are being rewritten in. */
  version: string;
  /** Objects listed so far in this pass. */
  seen: number;
  /** Objects written back (including no-op writes of objects already in the storage version). */
  rewritten: number;
  /** Objects someone else wrote meanwhile (409) or deleted (404): already in the storage version or gone. */
  skipped: number;
  /** True when this call resumed a recorded run. */
  resumed: boolean;
}

export interface StorageMigrationOptions {
  /** Objects per list page (default 100). */
  pageSize?: number;
  onProgress?: (progress: StorageMigrationProgress) => void;
  /** Refuse unless the CRD's storage version is this one (e.g. `v1` after an upgrade). */
  expectStorageVersion?: string;
  /** Stop after this many pages (tests of resumption); the state stays recorded. */
  maxPages?: number;
  signal?: AbortSignal;
  fieldManager?: string;
}

export interface StorageMigrationResult extends StorageMigrationProgress {
  /** `status.storedVersions` before and after. */
  storedVersionsBefore: string[];
  storedVersionsAfter: string[];
  /** False when stopped early (`maxPages`, signal): run again to finish. */
  complete: boolean;
}

export class StorageMigrationError extends Error {
  override readonly name = 'StorageMigrationError';
}

interface RecordedState {
  version: string;
  /** The CRD's `metadata.generation` when the pass began. */
  generation: number;
  continue?: string;
  seen: number;
  rewritten: number;
  skipped: number;
  startedAt: string;
}

interface CrdShape {
  spec: { group: string; names: { kind: string; plural: string }; scope: string; versions: { name: string; storage: boolean; served: boolean }[] };
  status?: { storedVersions?: string[] };
}

/**
 * Runs `fn` again while the API server answers 429 (it does, "storage is (re)initializing", for a
 * while after a CRD changes), waiting its Retry-After (default 1 s, at least 250 ms), for at most
 * about a minute; an abort ends the wait at once. Exported for its tests.
 * @internal
 */
export async function patiently<T>(fn: () => Promise<T>, signal?: AbortSignal, clock: Clock = systemClock): Promise<T> {
  const giveUpAt = clock.monotonic() + 60_000;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof ApiError && err.reason === 'TooManyRequests')) throw err;
      const waitMs = Math.max(250, err.retryAfterMs ?? 1_000);
      if (clock.monotonic() + waitMs > giveUpAt) throw err;
      await clock.sleep(waitMs, signal);
    }
  }
}

function readState(crd: KubeObject, version: string): RecordedState | undefined {
  const raw = crd.metadata.annotations?.[STORAGE_MIGRATION_ANNOTATION];
  if (!raw) return undefined;
  try {
    const state = JSON.parse(raw) as RecordedState;
    // A record for another target, or of the CRD as it was before a change of its spec, is stale.
    return state.version === version && state.generation === crd.metadata.generation ? state : undefined;
  } catch {
    return undefined;
  }
}

/** kube-apiserver's `storageVersionHash` of group/version/kind in discovery (apiserver's `StorageVersionHash`). */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}

/** How long a pass waits for discovery to publish the storage version. */
const STORAGE_SWAP_TIMEOUT_MS = 60_000;

/**
 * Resolves once the API server's discovery says `plural` is stored as `version` (its
 * `storageVersionHash`), or publishes no hash for it (nothing to wait for); throws after a minute.
 */
async function untilStoredAs(client: KubeClient, shape: CrdShape, version: string, signal?: AbortSignal): Promise<void> {
  const { group, names } = shape.spec;
  const expected = storageVersionHash(group, version, names.kind);
  const started = performance.now();
  let seen: string | undefined;
  for (;;) {
    signal?.throwIfAborted();
    const list = await client.request<{ resources?: { name: string; storageVersionHash?: string }[] }>('GET', `/apis/${group}/${version}`, signal ? { signal } : {}).catch((err: unknown) => {
      if (isNotFound(err)) return undefined; // the version not in discovery yet
      throw err;
    });
    const resource = list?.resources?.find((r) => r.name === names.plural);
    seen = resource?.storageVersionHash;
    if (resource && (seen === undefined || seen === expected)) return;
    if (performance.now() - started >= STORAGE_SWAP_TIMEOUT_MS) {
      throw new StorageMigrationError(
        `the API server does not store ${names.plural}.${group} as ${version} yet (discovery's storageVersionHash is ${seen ?? 'absent'} after ${STORAGE_SWAP_TIMEOUT_MS / 1000} s, ${expected} expected); nothing was written; run again`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Records `state` (or removes the record) on the CRD; resolves with the CRD as it now is. */
async function recordState(client: KubeClient, name: string, state: RecordedState | null, fieldManager: string): Promise<KubeObject> {
  return client.patch(CustomResourceDefinitionKind, { namespace: '', name }, {
    type: 'merge',
    body: { metadata: { annotations: { [STORAGE_MIGRATION_ANNOTATION]: state === null ? null : JSON.stringify(state) } } },
  }, { fieldManager });
}

/** Rewrites every object of CRD `name` in its storage version, then prunes `storedVersions`. */
export async function migrateStorage(client: KubeClient, name: string, options: StorageMigrationOptions = {}): Promise<StorageMigrationResult> {
  const fieldManager = options.fieldManager ?? 'converge-migrate-storage';
  const crd = await client.get(CustomResourceDefinitionKind, { namespace: '', name });
  const shape = crd as unknown as CrdShape;
  const storage = shape.spec.versions.find((v) => v.storage);
  if (!storage) throw new StorageMigrationError(`CRD ${name} has no storage version`);
  if (options.expectStorageVersion && storage.name !== options.expectStorageVersion) {
    throw new StorageMigrationError(`the storage version of ${name} is ${storage.name}, not ${options.expectStorageVersion}: apply the CRD that makes ${options.expectStorageVersion} the storage version first; nothing was changed`);
  }
  const storedVersionsBefore = shape.status?.storedVersions ?? [];
  const kind = defineKind<KubeObject>({ group: shape.spec.group, version: storage.name, kind: shape.spec.names.kind, plural: shape.spec.names.plural, namespaced: shape.spec.scope === 'Namespaced' });

  const recorded = readState(crd, storage.name);
  const state: RecordedState = recorded ?? { version: storage.name, generation: crd.metadata.generation ?? 0, seen: 0, rewritten: 0, skipped: 0, startedAt: new Date().toISOString() };
  const progress = (): StorageMigrationProgress => ({ crd: name, version: storage.name, seen: state.seen, rewritten: state.rewritten, skipped: state.skipped, resumed: recorded !== undefined });
  /** Throws when the CRD's spec changed since the pass began (the record is removed: the next run starts afresh). */
  const unchanged = async (now: KubeObject): Promise<void> => {
    if (now.metadata.generation === state.generation) return;
    await recordState(client, name, null, fieldManager);
    throw new StorageMigrationError(
      `the CRD ${name} changed during the migration (generation ${state.generation} → ${String(now.metadata.generation)}): objects written since may be stored in another version; storedVersions kept as ${JSON.stringify((now as unknown as CrdShape).status?.storedVersions ?? [])}; run again (a fresh pass)`,
    );
  };
  await untilStoredAs(client, shape, storage.name, options.signal);
  if (!recorded) await unchanged(await recordState(client, name, state, fieldManager));

  let pages = 0;
  for (;;) {
    options.signal?.throwIfAborted();
    if (options.maxPages !== undefined && pages >= options.maxPages) {
      return { ...progress(), storedVersionsBefore, storedVersionsAfter: storedVersionsBefore, complete: false };
    }
    let page;
    try {
      page = await patiently(() => client.list(kind, { limit: options.pageSize ?? 100, ...(state.continue ? { continue: state.continue } : {}), ...(options.signal ? { signal: options.signal } : {}) }), options.signal);
    } catch (err) {
      if (!(isGone(err) && state.continue)) throw err;
      // The token was compacted away: go on from the same key with the one the API server gives,
      // as kube-storage-version-migrator does (what was created since is stored as `storage`
      // already); without one, list again from the start (idempotent, but a pass slower than the
      // compaction interval would then never end).
      const next = (err as ApiError).status?.metadata?.continue;
      if (next) state.continue = next;
      else delete state.continue;
      continue;
    }
    for (const item of page.items) {
      options.signal?.throwIfAborted();
      state.seen++;
      try {
        await patiently(() => client.replace(kind, { ...item, apiVersion: kind.apiVersion, kind: kind.kind }, { fieldManager, ...(options.signal ? { signal: options.signal } : {}) }), options.signal);
        state.rewritten++;
      } catch (err) {
        if (isConflict(err) || isNotFound(err)) state.skipped++;
        else throw new StorageMigrationError(`${kind.kind} ${item.metadata.namespace ? `${item.metadata.namespace}/` : ''}${item.metadata.name} could not be rewritten (${err instanceof Error ? err.message : String(err)}); nothing was dropped from storedVersions; fix the cause and run again (it resumes)`);
      }
    }
    pages++;
    const token = page.metadata.continue || undefined;
    if (token) state.continue = token;
    else delete state.continue;
    options.onProgress?.(progress());
    if (!token) break;
    await unchanged(await recordState(client, name, state, fieldManager));
  }

  // Every object was rewritten in `storage`. Drop the others, unless the storage version moved.
  for (let attempt = 0; ; attempt++) {
    const after = await client.get(CustomResourceDefinitionKind, { namespace: '', name });
    const now = (after as unknown as CrdShape).spec.versions.find((v) => v.storage)?.name;
    if (now !== storage.name) {
      await recordState(client, name, null, fieldManager);
      throw new StorageMigrationError(`the storage version of ${name} changed from ${storage.name} to ${now} during the migration: objects written since may be stored in ${now}; storedVersions kept as ${JSON.stringify((after as unknown as CrdShape).status?.storedVersions ?? [])}; run again to migrate to ${now}`);
    }
    await unchanged(after);
    try {
      await client.request('PATCH', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(name)}/status`, {
        body: { metadata: { resourceVersion: after.metadata.resourceVersion }, status: { storedVersions: [storage.name] } },
        contentType: 'application/merge-patch+json',
        query: new URLSearchParams({ fieldManager }),
      });
      break;
    } catch (err) {
      if (!isConflict(err) || attempt >= 5) throw err; // the CRD changed since it was read: look again
    }
  }
  await recordState(client, name, null, fieldManager);
  return { ...progress(), storedVersionsBefore, storedVersionsAfter: [storage.name], complete: true };
}
