/**
 * What a caller passes to `KubeClient` and gets back from its watches: the client's options and
 * each request's options, patch encodings and watch events. Types only.
 * @module
 */
import type { CredentialsOptions, KubeConfig } from '../kubeconfig/index.ts';
import type { KubeObject } from '../objects/index.ts';

export interface KubeClientOptions {
  kubeConfig: KubeConfig;
  /** Sent as User-Agent; audit logs show it. Default `converge/0.1`. */
  userAgent?: string;
  /** Per-request timeout in ms (default 30 000). Watches are not subject to it. */
  timeoutMs?: number;
  /**
   * Client-side rate limit: one token bucket of `qps` requests per second with bursts of
   * `burst` (default `qps` × 2). Default none (`qps <= 0` or unset), as controller-runtime.
   */
  qps?: number;
  burst?: number;
  /** How credentials are refreshed (token file check interval, exec plugin timeout). */
  credentials?: CredentialsOptions;
  /** Default field manager for writes (default `converge`). */
  fieldManager?: string;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  /** Ask for `PartialObjectMetadataList`: items carry metadata only. */
  metadataOnly?: boolean;
  /** This request's timeout (default: the client's `timeoutMs`). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface ListAllOptions extends Omit<ListOptions, 'continue' | 'limit' | 'timeoutMs'> {
  /** Items per page (default 500). Make it smaller for kinds whose objects are large. */
  pageSize?: number;
  /**
   * Timeout of each page (default: the client's `timeoutMs`). A page that times out is asked for
   * again in smaller pages (a quarter of the size, down to 1): a page of large objects on a slow
   * link then still arrives, instead of failing the same way for ever.
   */
  pageTimeoutMs?: number;
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  /** Server-side timeout; the server ends the watch after it. */
  timeoutSeconds?: number;
  allowWatchBookmarks?: boolean;
  /** Events carry `PartialObjectMetadata`. */
  metadataOnly?: boolean;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';
export interface WatchEvent<T extends KubeObject> {
  type: WatchEventType;
  object: T;
}

export interface WriteOptions {
  fieldManager?: string;
  dryRun?: boolean;
  signal?: AbortSignal;
}

export interface JsonPatchOperation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: unknown;
  from?: string;
}

/** A patch and its encoding (Server-Side Apply is `KubeClient.apply`); `strategic` works for built-in kinds only. */
export type Patch =
  | { type: 'merge'; body: unknown }
  | { type: 'json'; body: JsonPatchOperation[] }
  | { type: 'strategic'; body: unknown };

export interface PatchOptions extends WriteOptions {
  subresource?: 'status';
}

export interface ApplyOptions extends WriteOptions {
  /** Take ownership of fields managed by others (default false). */
  force?: boolean;
  subresource?: 'status';
}

export interface DeleteOptions {
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  preconditions?: { uid?: string; resourceVersion?: string };
  gracePeriodSeconds?: number;
  /**
   * Ask the server to judge the delete (admission, preconditions, RBAC) without deleting
   * anything; resolves as the real delete would. The client's observers are not told (a cache
   * written through must not drop an object that is still there).
   */
  dryRun?: boolean;
  signal?: AbortSignal;
}
