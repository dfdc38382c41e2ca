/**
 * The vendor token a DigitalHumanProvider names (`spec.credentials.secretRef`), read without
 * caching other people's Secrets.
 *
 * Secrets are watched by metadata only (`PartialObjectMetadata`: the operator's memory does not
 * grow with the size of Secrets it never uses, Helm release Secrets for one); the referenced
 * Secret is read on demand with one GET, and its token kept keyed by the Secret's UID and
 * resourceVersion. While the watch shows the same version, the token is served from memory: a
 * converged provider costs no request. An edited (or re-created) Secret shows a new version in
 * the metadata cache, and the next read fetches it again.
 *
 * Guarantees:
 * - Only a Secret labelled `VENDOR_CREDENTIALS_LABEL=true` is read (judged on the metadata cache,
 *   before any GET): whoever may create a provider chooses where its token goes, so a Secret must
 *   opt in to being sent. A label taken away also drops what was held of that Secret.
 * - Only a token a request header can carry is given out (one line of printable ASCII): anything
 *   else would fail in the HTTP client as if the vendor were unreachable.
 * - `problem` says why `token` gave nothing (missing, not allowed, invalid), never quoting it.
 * - A token is never logged.
 * - Tokens are held only for Secrets a cached provider names (`referenced`): one no provider
 *   names is read but not kept, and one that stops being named goes when `release` is called for
 *   it (the reconciler does, when a provider leaves the cache or moves to another Secret).
 * - The last token of a Secret deleted while a provider still names it stays (`lastKnown`): a
 *   namespace being deleted takes the Secret and the provider together, and the provider's
 *   cleanup at the vendor still needs the token. It goes with the last provider naming it.
 * @module
 */
import { SecretKind, compareResourceVersions, isNotFound } from '@converge/runtime';
import type { KubeClient, PartialObjectMetadata, Store } from '@converge/runtime';
import { DEFAULT_CREDENTIALS_KEY, ProviderReason, VENDOR_CREDENTIALS_LABEL, optedInForVendor } from './api/schema-free.ts';
import type { DigitalHumanProvider } from './api/schema-free.ts';

interface Remembered {
  /** The Secret version `token` was read at; undefined once the Secret is gone. */
  uid: string | undefined;
  resourceVersion: string | undefined;
  token: string | undefined;
  /** The last non-empty token read, kept after the Secret is gone. */
  last: string | undefined;
  /** Why the value read at this version is no token (it is not kept). */
  invalid?: string;
}

/** Why `token` gave nothing, for the provider's status: a stable reason and a message a person can act on. */
export interface CredentialsProblem {
  reason: typeof ProviderReason.CredentialsMissing | typeof ProviderReason.CredentialsNotAllowed | typeof ProviderReason.CredentialsInvalid;
  message: string;
}

export interface CredentialsReaderDeps {
  client: KubeClient;
  secrets: Store<PartialObjectMetadata>;
  /** Whether a cached provider names Secret `namespace/name`. */
  referenced(namespace: string, name: string): boolean;
}

export class CredentialsReader {
  readonly #client: KubeClient;
  readonly #secrets: Store<PartialObjectMetadata>;
  readonly #referenced: CredentialsReaderDeps['referenced'];
  /** Per Secret (`ns/name`), per key in it: the token read at that Secret version, and the last one read. */
  readonly #tokens = new Map<string, Map<string, Remembered>>();

  constructor(deps: CredentialsReaderDeps) {
    this.#client = deps.client;
    this.#secrets = deps.secrets;
    this.#referenced = deps.referenced;
  }

  /**
   * The trimmed value of `key` in Secret `namespace/name`; undefined when the Secret or the key
   * is missing or empty, the Secret is not labelled for vendor use, or the value is no token a
   * header can carry (`problem` says which).
   */
  async token(namespace: string, name: string, key: string, signal?: AbortSignal): Promise<string | undefined> {
    const secret = `${namespace}/${name}`;
    const meta = this.#secrets.get({ namespace, name });
    if (!meta) {
      this.#gone(namespace, name);
      return undefined; // the Secret watch brings the CR back when it appears
    }
    if (!optedInForVendor(meta)) {
      this.#tokens.delete(secret); // not even the last token of a Secret that opted out is used
      return undefined;
    }
    const known = this.#tokens.get(secret)?.get(key);
    if (known?.uid !== undefined && known.uid === meta.metadata.uid && compareResourceVersions(known.resourceVersion, meta.metadata.resourceVersion) >= 0) return known.token;
    let data: Record<string, string> | undefined;
    let read: { uid?: string; resourceVersion?: string };
    try {
      const object = await this.#client.get(SecretKind, { namespace, name }, signal ? { signal } : {});
      // The Secret as read must be the one judged, still labelled: the cache may lag behind a
      // label taken away or a Secret re-created without it (its watch event re-triggers us).
      if (object.metadata.uid !== meta.metadata.uid || !optedInForVendor(object)) {
        this.#tokens.delete(secret);
        return undefined;
      }
      data = object.data;
      read = object.metadata;
    } catch (err) {
      if (!isNotFound(err)) throw err;
      this.#gone(namespace, name);
      return undefined;
    }
    const encoded = data?.[key];
    const value = encoded ? Buffer.from(encoded, 'base64').toString('utf8').trim() || undefined : undefined;
    const invalid = value === undefined ? undefined : whyNotAToken(value);
    const token = invalid ? undefined : value;
    if (!this.#referenced(namespace, name)) {
      this.#tokens.delete(secret); // read for a provider already gone (a late-create sweep): not kept
      return token;
    }
    let keys = this.#tokens.get(secret);
    if (!keys) this.#tokens.set(secret, (keys = new Map()));
    keys.set(key, { uid: read.uid, resourceVersion: read.resourceVersion, token, last: token ?? known?.last, ...(invalid ? { invalid } : {}) });
    return token;
  }

  /** Why `token(namespace, name, key)` gave nothing, as of its last call (and the metadata cache now). */
  problem(namespace: string, name: string, key: string): CredentialsProblem {
    const meta = this.#secrets.get({ namespace, name });
    if (meta && !optedInForVendor(meta)) {
      return {
        reason: ProviderReason.CredentialsNotAllowed,
        message: `Secret ${name} in namespace ${namespace} is not labelled for vendor use, so the operator does not read it; ` +
          `if its key ${key} is meant to be sent to this provider's endpoint, label it: kubectl -n ${namespace} label secret ${name} ${VENDOR_CREDENTIALS_LABEL}=true`,
      };
    }
    const invalid = meta ? this.#tokens.get(`${namespace}/${name}`)?.get(key)?.invalid : undefined;
    if (invalid) {
      return {
        reason: ProviderReason.CredentialsInvalid,
        message: `key ${key} of Secret ${name} in namespace ${namespace} holds ${invalid}; a vendor token is one line of printable ASCII, so nothing was sent`,
      };
    }
    return { reason: ProviderReason.CredentialsMissing, message: `Secret ${name} with key ${key} not found in namespace ${namespace}, or the key is empty` };
  }

  /** The last token read from `key` of Secret `namespace/name`, also after the Secret was deleted. */
  lastKnown(namespace: string, name: string, key: string): string | undefined {
    return this.#tokens.get(`${namespace}/${name}`)?.get(key)?.last;
  }

  /** A provider stopped naming Secret `namespace/name`: what is held for it goes unless another cached provider names it. */
  release(namespace: string, name: string): void {
    if (!this.#referenced(namespace, name)) this.#tokens.delete(`${namespace}/${name}`);
  }

  /** Secrets held. */
  get size(): number {
    return this.#tokens.size;
  }

  /** The Secret is gone: only the last tokens stay, while a provider still names it. */
  #gone(namespace: string, name: string): void {
    const secret = `${namespace}/${name}`;
    const keys = this.#tokens.get(secret);
    if (!keys) return;
    if (!this.#referenced(namespace, name)) {
      this.#tokens.delete(secret);
      return;
    }
    for (const [key, r] of keys) {
      if (r.last === undefined) keys.delete(key);
      else keys.set(key, { ...r, uid: undefined, resourceVersion: undefined, token: undefined });
    }
    if (keys.size === 0) this.#tokens.delete(secret);
  }
}

/** Why the Secret a CR names gives no token (`CredentialsReader.problem` for its reference). */
export function credentialsProblem(reader: Pick<CredentialsReader, 'problem'>, dhp: DigitalHumanProvider): CredentialsProblem {
  const ref = dhp.spec.credentials.secretRef;
  return reader.problem(dhp.metadata.namespace ?? '', ref.name, ref.key ?? DEFAULT_CREDENTIALS_KEY);
}

/** What makes `value` no bearer token a request header can carry, in words; undefined when it is one. */
function whyNotAToken(value: string): string | undefined {
  if (/^[\x21-\x7e]+$/.test(value)) return undefined;
  if (/[\r\n]/.test(value)) return 'a line break';
  if (/[ \t]/.test(value)) return 'a space';
  return /[\x00-\x1f\x7f]/.test(value) ? 'a control character' : 'a character outside printable ASCII';
}
