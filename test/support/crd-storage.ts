/**
 * What a CRD's objects are stored as, read where the API server cannot hide it (etcd, through the
 * harness's etcd URL), and the CRD's `status.storedVersions`; and the wait the API server asks for
 * a moment after a CRD changes (429 "storage is (re)initializing").
 * @module
 */
import { CustomResourceDefinitionKind } from '@converge/runtime';
import type { KubeClient } from '@converge/runtime';

/** The apiVersion etcd holds each object of a resource in (custom resources are stored as JSON), by `namespace/name`. */
export async function storedApiVersions(etcdUrl: string, group: string, resource: string): Promise<Map<string, string>> {
  const prefix = `/registry/${group}/${resource}/`;
  const rangeEnd = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
  const res = (await (await fetch(`${etcdUrl}/v3/kv/range`, {
    method: 'POST',
    body: JSON.stringify({ key: Buffer.from(prefix).toString('base64'), range_end: Buffer.from(rangeEnd).toString('base64'), limit: 100000 }),
  })).json()) as { kvs?: { key: string; value: string }[] };
  const out = new Map<string, string>();
  for (const kv of res.kvs ?? []) {
    const key = Buffer.from(kv.key, 'base64').toString('utf8').slice(prefix.length);
    out.set(key, (JSON.parse(Buffer.from(kv.value, 'base64').toString('utf8')) as { apiVersion: string }).apiVersion);
  }
  return out;
}

/** The CRD's `status.storedVersions`, sorted. */
export async function storedVersions(client: KubeClient, name: string): Promise<string[]> {
  const live = await client.get(CustomResourceDefinitionKind, { namespace: '', name });
  return [...((live.status as { storedVersions?: string[] } | undefined)?.storedVersions ?? [])].sort();
}

/** Runs `fn` again while the API server answers 429 (for a moment after a CRD changes), up to about 30 s. */
export async function patiently<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if ((err as { code?: number }).code !== 429 || attempt > 60) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
