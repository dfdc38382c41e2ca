/**
 * Test support for the late-create sweep's unit tests (named `*.test-support.ts`, so the
 * package's files rule keeps it out of the published build): a sweep over one vendor account
 * (every key's token is `token`), on a client, a vendor and a fake clock the test provides; and
 * the ledger's ConfigMaps in memory, with the providers the test says exist (in the sweep's cache
 * and at the "API server" alike, unless told apart), as that client. The sweep against a real API
 * server is tested in test/integration.
 * @module
 */
import { pino } from 'pino';
import { ApiError } from '@converge/runtime';
import type { Clock, ConfigMap, EventSink, FakeClock, KubeClient, Store } from '@converge/runtime';
import type { DigitalHumanProvider } from './api/schema-free.ts';
import { LateCreateSweep } from './late-creates.ts';
import { homeShard, ledgerShardNames } from './late-create-ledger-shards.ts';
import type { LateCreateSweepOptions } from './late-creates.ts';
import type { VendorApi, VendorApis } from './vendor-api.ts';

/** `onWarn` hears the message of every warning the sweep logs (its log is silent otherwise). */
export function sweepOver(client: KubeClient, api: VendorApi, clock: FakeClock, timing: Pick<LateCreateSweepOptions, 'settleMs' | 'windowMs' | 'maxGapMs'>, cached: ReadonlyMap<string, DigitalHumanProvider> = new Map(), onWarn?: (message: string) => void): LateCreateSweep {
  const log = pino({ level: onWarn ? 'warn' : 'silent' }, { write: (line: string) => onWarn?.(String((JSON.parse(line) as { msg?: unknown }).msg)) });
  return new LateCreateSweep({
    client,
    namespace: 'converge',
    vendors: { forEndpoint: () => api } as Pick<VendorApis, 'forEndpoint'>,
    credentials: { token: async () => 'token' },
    providers: { get: (ref: { namespace: string; name: string }) => cached.get(`${ref.namespace}/${ref.name}`) } as unknown as Store<DigitalHumanProvider>,
    events: { normal: () => undefined, warning: () => undefined } as unknown as EventSink,
    clock,
    log,
    ...timing,
  });
}

/** The ledger's ConfigMaps in memory: what the sweep reads and writes, and when each entry left it. */
export interface InMemoryLedger {
  /** A client serving only the calls the sweep makes: get (404 while absent), create, replace. */
  readonly client: KubeClient;
  /** The entries now (uid → encoded entry), over every shard; empty while no ConfigMap exists. */
  data(): Record<string, string>;
  /** The ConfigMaps now, by name, with their entries. */
  configMaps(): Map<string, Record<string, string>>;
  /** When (clock time) each uid was last removed from the ledger (in no ConfigMap after a replace). */
  readonly removedAt: ReadonlyMap<string, number>;
  /** The providers the client's reads find, by `namespace/name` (empty: every read is a 404). */
  readonly providers: Map<string, DigitalHumanProvider>;
  /** How many providers the client was asked for. */
  providerReads(): number;
}

/**
 * A ledger holding `initial` in each entry's home shard (in the single ConfigMap of earlier
 * versions, shard 0, with `legacy`); no ConfigMap when not given: the sweep creates them.
 */
export function inMemoryLedger(clock: Clock, initial?: Record<string, string>, options: { legacy?: boolean } = {}): InMemoryLedger {
  const cms = new Map<string, ConfigMap>();
  const names = ledgerShardNames();
  for (const [uid, value] of Object.entries(initial ?? {})) {
    const name = names[options.legacy ? 0 : homeShard(uid)]!;
    const cm = cms.get(name) ?? { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'converge', resourceVersion: '1' }, data: {} };
    cm.data![uid] = value;
    cms.set(name, cm);
  }
  const data = () => Object.assign({}, ...[...cms.values()].map((cm) => cm.data ?? {})) as Record<string, string>;
  const removedAt = new Map<string, number>();
  const providers = new Map<string, DigitalHumanProvider>();
  let providerReads = 0;
  const client = {
    get: async (kind: { kind: string }, ref: { namespace: string; name: string }) => {
      if (kind.kind === 'DigitalHumanProvider') {
        providerReads++;
        const found = providers.get(`${ref.namespace}/${ref.name}`);
        if (!found) throw new ApiError({ reason: 'NotFound', code: 404, message: `digitalhumanproviders "${ref.name}" not found` });
        return structuredClone(found);
      }
      const cm = cms.get(ref.name);
      if (!cm) throw new ApiError({ reason: 'NotFound', code: 404, message: `configmaps "${ref.name}" not found` });
      return structuredClone(cm);
    },
    create: async (_kind: unknown, next: ConfigMap) => {
      const cm = structuredClone({ ...next, metadata: { ...next.metadata, resourceVersion: '1' } });
      cms.set(cm.metadata!.name!, cm);
      return structuredClone(cm);
    },
    replace: async (_kind: unknown, next: ConfigMap) => {
      const before = Object.keys(cms.get(next.metadata!.name!)?.data ?? {});
      cms.set(next.metadata!.name!, structuredClone(next));
      const now = data();
      for (const uid of before) if (!(uid in now)) removedAt.set(uid, clock.monotonic()); // monotonic: wall steps do not move it
      return structuredClone(next);
    },
  } as unknown as KubeClient;
  const configMaps = () => new Map([...cms].map(([name, cm]) => [name, { ...cm.data }]));
  return { client, data, configMaps, removedAt, providers, providerReads: () => providerReads };
}

/** A deterministic random number in [0, 1) per call, from `seed` (xorshift32): the schedules' own choices replay with the case. */
export function seededRandom(seed: number): () => number {
  let rnd = seed >>> 0 || 1;
  return () => {
    rnd ^= rnd << 13;
    rnd ^= rnd >>> 17;
    rnd ^= rnd << 5;
    return (rnd >>> 0) / 4294967296;
  };
}
