/**
 * The late-create ledger spread over `LEDGER_SHARDS` ConfigMaps in the operator's namespace
 * (ADR 0040): each entry lives in the shard its UID hashes to, so that the ledger holds
 * `LEDGER_SHARDS` times what one ConfigMap holds (1 MiB of data, about 3,400 entries) and a write
 * rewrites only a sixteenth of it.
 *
 * Shard 0 keeps the name of the single ConfigMap of earlier versions (`converge-late-creates`);
 * the others are `converge-late-creates-1` … `-15`. The RBAC Role names each of them.
 *
 * Guarantees:
 * - **An entry is written to its home shard.** `set` writes only the home shard of its UID
 *   (`homeShard`: the first byte of the UID's SHA-256, stable across versions and processes).
 * - **Entries of earlier versions are kept.** `load` moves every entry it finds outside its home
 *   shard (the single ConfigMap of earlier versions, or a copy left by a move that was cut short)
 *   into its home shard first, and only then out of where it was; a copy already at home wins.
 *   So a move interrupted at any point loses nothing, and the next `load` finishes it.
 * - **A removed entry stays removed.** `remove` also removes the UID from where an entry outside
 *   its home shard may be (shard 0 until `load` has read every shard; after that, wherever a load
 *   found it and could not yet take it out), and `load` runs apart from `set` and `remove` (each
 *   waits for the other), so no move puts back what a removal took out. The copies outside the
 *   home shard go first, so a removal cut short leaves the entry as it was or gone, never an older
 *   copy in its place.
 * - Each shard's changes are those of `LedgerStore`: conditional, retried on conflicts, batched,
 *   no write when nothing changed. A `remove` spanning several shards may be stored in some and
 *   not others when it throws; removing again is harmless.
 *
 * Assumptions: one writer at a time apart from conflicts (the leader); an entry outside its home
 * shard can only be in shard 0 (earlier versions wrote only there, and a move takes entries only
 * out of where they were), so the shard count and the hash never change.
 * @module
 */
import { createHash } from 'node:crypto';
import type { KubeClient } from '@converge/runtime';
import type { LedgerData } from './late-create-ledger.ts';
import { LedgerStore } from './late-create-ledger-store.ts';

/** The name of shard 0, the single ConfigMap of earlier versions. */
export const LATE_CREATES_CONFIGMAP = 'converge-late-creates';

/** How many ConfigMaps hold the ledger. Fixed: the RBAC Role names each shard, and a smaller count would leave entries unread (ADR 0040). */
export const LEDGER_SHARDS = 16;

/** The ConfigMap names of the shards, shard 0 first. */
export function ledgerShardNames(): string[] {
  return Array.from({ length: LEDGER_SHARDS }, (_, i) => (i === 0 ? LATE_CREATES_CONFIGMAP : `${LATE_CREATES_CONFIGMAP}-${i}`));
}

/** The shard an entry's UID belongs in. */
export function homeShard(uid: string): number {
  return createHash('sha256').update(uid).digest()[0]! % LEDGER_SHARDS;
}

export class ShardedLedger {
  readonly #namespace: string;
  readonly #shards: LedgerStore[];
  /** Shards other than its home where each uid was read and not yet removed from. */
  readonly #away = new Map<string, Set<number>>();
  /** Whether every shard was read once; before that, an entry may be in shard 0 (earlier versions). */
  #read = false;
  #loading: Promise<unknown> | undefined;
  readonly #inFlight = new Set<Promise<unknown>>();

  constructor(client: KubeClient, namespace: string) {
    this.#namespace = namespace;
    this.#shards = ledgerShardNames().map((name) => new LedgerStore(client, namespace, name));
  }

  /** Where the ledger lives, for logs. */
  get ref(): string {
    return `${this.#namespace}/${LATE_CREATES_CONFIGMAP}{,-1…-${LEDGER_SHARDS - 1}}`;
  }

  /**
   * Every entry (uid → encoded entry), after moving those outside their home shard home. Runs
   * alone: `set` and `remove` calls wait for it, and it waits for those in flight (a removal
   * between its read and its move would otherwise be undone by the move).
   */
  async load(signal: AbortSignal): Promise<LedgerData> {
    while (this.#loading) await this.#loading.catch(() => undefined);
    const loading = (async () => {
      await Promise.allSettled(this.#inFlight);
      return this.#load(signal);
    })();
    this.#loading = loading;
    try {
      return await loading;
    } finally {
      this.#loading = undefined;
    }
  }

  /** Stores `value` under `uid` in its home shard (no write when it is there already). */
  set(uid: string, value: string, signal: AbortSignal): Promise<void> {
    return this.#exclusiveOfLoad(() =>
      this.#shards[homeShard(uid)]!.change((data) => {
        if (data[uid] === value) return false;
        data[uid] = value;
        return true;
      }, signal),
    );
  }

  /**
   * Removes each of `uids` for which `stillRemove` (asked at the write, after any conflict) says
   * yes, from its home shard and from wherever else it may be (shard 0 until every shard was
   * read; else where a load found it and could not remove it yet): one write per shard touched.
   */
  remove(uids: readonly string[], signal: AbortSignal, stillRemove: (uid: string) => boolean = () => true): Promise<void> {
    return this.#exclusiveOfLoad(async () => {
      // Copies outside the home shard go first: a removal cut short then leaves the entry as it was
      // or gone, never an older copy in its place.
      const away = new Map<number, string[]>();
      const home = new Map<number, string[]>();
      for (const uid of uids) {
        for (const shard of this.#read ? (this.#away.get(uid) ?? []) : [0]) if (shard !== homeShard(uid)) push(away, shard, uid);
        push(home, homeShard(uid), uid);
      }
      await this.#removeFrom(away, stillRemove, signal);
      await this.#removeFrom(home, stillRemove, signal);
    });
  }

  async #removeFrom(byShard: Map<number, string[]>, stillRemove: (uid: string) => boolean, signal: AbortSignal): Promise<void> {
    const results = await Promise.allSettled(
      [...byShard].map(async ([shard, group]) => {
        let removed: string[] = [];
        await this.#shards[shard]!.change((data) => deleteKeys(data, (removed = group.filter(stillRemove))), signal);
        for (const uid of removed) this.#notAway(uid, shard);
      }),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  async #load(signal: AbortSignal): Promise<LedgerData> {
    const read = await Promise.all(this.#shards.map((shard) => shard.read(signal)));
    this.#away.clear();
    const moves = new Map<number, LedgerData>();
    const leaving = new Map<number, string[]>();
    read.forEach((data, shard) => {
      for (const [uid, value] of Object.entries(data ?? {})) {
        const home = homeShard(uid);
        if (home === shard) continue;
        moves.set(home, Object.assign(moves.get(home) ?? {}, { [uid]: value }));
        push(leaving, shard, uid);
        this.#away.set(uid, (this.#away.get(uid) ?? new Set()).add(shard));
      }
    });
    this.#read = true;
    await Promise.all([...moves].map(([home, entries]) => this.#shards[home]!.change((data) => copyMissing(data, entries), signal)));
    await Promise.all(
      [...leaving].map(async ([shard, uids]) => {
        await this.#shards[shard]!.change((data) => deleteKeys(data, uids), signal);
        for (const uid of uids) this.#notAway(uid, shard);
      }),
    );
    const merged: LedgerData = {};
    read.forEach((data, shard) => {
      for (const [uid, value] of Object.entries(data ?? {})) if (homeShard(uid) === shard) merged[uid] = value;
    });
    for (const entries of moves.values()) for (const [uid, value] of Object.entries(entries)) merged[uid] ??= value;
    return merged;
  }

  async #exclusiveOfLoad<T>(op: () => Promise<T>): Promise<T> {
    while (this.#loading) await this.#loading.catch(() => undefined);
    const running = op();
    this.#inFlight.add(running);
    try {
      return await running;
    } finally {
      this.#inFlight.delete(running);
    }
  }

  #notAway(uid: string, shard: number): void {
    const away = this.#away.get(uid);
    away?.delete(shard);
    if (away?.size === 0) this.#away.delete(uid);
  }
}

function push(groups: Map<number, string[]>, shard: number, uid: string): void {
  const group = groups.get(shard);
  if (group) group.push(uid);
  else groups.set(shard, [uid]);
}

function copyMissing(data: LedgerData, entries: LedgerData): boolean {
  let changed = false;
  for (const [uid, value] of Object.entries(entries)) {
    if (Object.hasOwn(data, uid)) continue;
    data[uid] = value;
    changed = true;
  }
  return changed;
}

function deleteKeys(data: LedgerData, uids: readonly string[]): boolean {
  let changed = false;
  for (const uid of uids) {
    if (!Object.hasOwn(data, uid)) continue;
    delete data[uid];
    changed = true;
  }
  return changed;
}
