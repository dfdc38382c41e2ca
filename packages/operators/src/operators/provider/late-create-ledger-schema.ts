/**
 * The TypeBox schema of one entry of the late-create ledger (`late-create-ledger.ts`, ADR 0037):
 * a ConfigMap value, as JSON. The sweep reads an entry with the validator compiled from it ahead
 * of time (`../compiled-checks/`) and never loads this module; the generator and the tests do.
 *
 * Properties it does not name are allowed (an entry written by another version of the operator
 * stays readable) and dropped when read. There is no token field: the entry names the Secret.
 * @module
 */
import { Type } from '@sinclair/typebox';

const Text = () => Type.String({ minLength: 1 });

export const LedgerEntrySchema = Type.Object({
  /** The released CR's UID: the idempotency key of its creates. */
  uid: Text(),
  namespace: Text(),
  name: Text(),
  /** Where the instance would live (`status.instanceEndpoint`). */
  endpoint: Text(),
  /** The Secret with the token, in `namespace`. */
  secret: Type.Object({ name: Text(), key: Text() }),
  /** The last create request (`status.createRequestedAt`). */
  requestedAt: Text(),
  /** Looked for until then (RFC 3339). */
  until: Text(),
  /**
   * Written before a provider's first create, while the provider still exists: its key is looked
   * up only once the provider is gone without a deletion that honoured the finalizer
   * (kube-apiserver's race, kubernetes#77988). Absent: written at the release of the finalizer.
   */
  beforeCreate: Type.Optional(Type.Literal(true)),
});
