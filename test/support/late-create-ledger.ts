/**
 * The late-create ledger as a test reads it: the entries of every shard (ADR 0040) in a namespace,
 * by plain GETs (no move, no write), and whether a ConfigMap name is one of the shards.
 * @module
 */
import { ConfigMapKind, isNotFound } from '@converge/runtime';
import type { KubeClient } from '@converge/runtime';
import { ledgerShardNames } from '../../packages/operators/src/operators/provider/late-create-ledger-shards.ts';

/** uid → encoded entry, over every shard that exists. */
export async function ledgerEntries(client: KubeClient, namespace: string): Promise<Record<string, string>> {
  const shards = await Promise.all(
    ledgerShardNames().map((name) =>
      client.get(ConfigMapKind, { namespace, name }).then(
        (cm) => cm.data ?? {},
        (err: unknown) => {
          if (isNotFound(err)) return {};
          throw err;
        },
      ),
    ),
  );
  return Object.assign({}, ...shards) as Record<string, string>;
}

const names = new Set(ledgerShardNames());
export const isLedgerConfigMap = (name: string | undefined): boolean => name !== undefined && names.has(name);
