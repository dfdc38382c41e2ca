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
 * Guarantees: a token is never logged; only the tokens of referenced Secrets are held.
 * @module
 */
import { SecretKind, compareResourceVersions, isNotFound } from '@converge/runtime';
import type { KubeClient, PartialObjectMetadata, Store } from '@converge/runtime';
import { DEFAULT_CREDENTIALS_KEY } from './api/schema-free.ts';
import type { DigitalHumanProvider } from './api/schema-free.ts';

interface Remembered {
  uid: string | undefined;
  resourceVersion: string | undefined;
  token: string | undefined;
}

export class CredentialsReader {
  readonly #client: KubeClient;
  readonly #secrets: Store<PartialObjectMetadata>;
  /** Per `ns/name#key`: the token read at that Secret version. */
  readonly #tokens = new Map<string, Remembered>();

  constructor(deps: { client: KubeClient; secrets: Store<PartialObjectMetadata> }) {
    this.#client = deps.client;
    this.#secrets = deps.secrets;
  }

  /** The trimmed value of `key` in Secret `namespace/name`; undefined when the Secret or the key is missing or empty. */
  async token(namespace: string, name: string, key: string, signal?: AbortSignal): Promise<string | undefined> {
    const id = `${namespace}/${name}#${key}`;
    const meta = this.#secrets.get({ namespace, name });
    if (!meta) {
      this.#tokens.delete(id);
      return undefined; // the Secret watch brings the CR back when it appears
    }
    const known = this.#tokens.get(id);
    if (known && known.uid === meta.metadata.uid && compareResourceVersions(known.resourceVersion, meta.metadata.resourceVersion) >= 0) return known.token;
    let data: Record<string, string> | undefined;
    let read: { uid?: string; resourceVersion?: string };
    try {
      const secret = await this.#client.get(SecretKind, { namespace, name }, signal ? { signal } : {});
      data = secret.data;
      read = secret.metadata;
    } catch (err) {
      if (!isNotFound(err)) throw err;
      this.#tokens.delete(id);
      return undefined;
    }
    const encoded = data?.[key];
    const token = encoded ? Buffer.from(encoded, 'base64').toString('utf8').trim() || undefined : undefined;
    this.#tokens.set(id, { uid: read.uid, resourceVersion: read.resourceVersion, token });
    return token;
  }
}

/** What a CR's status says when the Secret it names, or the key in it, is missing. */
export function credentialsMessage(dhp: DigitalHumanProvider): string {
  const ref = dhp.spec.credentials.secretRef;
  return `Secret ${ref.name} with key ${ref.key ?? DEFAULT_CREDENTIALS_KEY} not found in namespace ${dhp.metadata.namespace}`;
}
