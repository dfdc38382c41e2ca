/**
 * Provider signals (issue 14): how soon does the upstream see what happens at the vendor? N
 * DigitalHumanProviders over a few vendor accounts are Ready; then, for a while, the vendor
 * changes under them at random — instances go down and come back, quotas run out and are raised
 * in the console, accounts are suspended and resumed — and a watcher in this process (as the
 * upstream would watch) times each affected provider until its status says so. Before that, a
 * quiet minute with usage growing measures what a steady state costs: vendor calls and status
 * writes per provider per minute.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { SecretKind } from '@converge/runtime';
import { DigitalHumanProviderKind } from '../../packages/operators/src/operators/provider/index.ts';
import type { DigitalHumanProvider } from '../../packages/operators/src/operators/provider/index.ts';
import { startVendorSimulator, type VendorSimulator } from '../../packages/operators/src/vendor-sim/index.ts';
import { pool } from '../support/fixtures.ts';
import { observe } from '../support/observer.ts';
import { startOperator } from '../support/operator.ts';
import { ratio, round, seconds, summarize } from '../support/stats.ts';
import type { Scenario } from './types.ts';

export const SIGNALS_NAMESPACE = 'bench-provider-signals';
/** The seed's requirement: visible to the upstream within ten seconds. */
const TARGET_P99_MS = 10_000;
const ACCOUNTS = 4;
const OBSERVE_SECONDS = 3;
/** The steady window: a minute, or the signal time when that is shorter (`--size tiny`). */
const STEADY_SECONDS = 60;
/** A change not visible after this long counts as missed. */
const MISS_AFTER_MS = 60_000;

type SignalKind = 'down' | 'healthy' | 'quota-exhausted' | 'quota-raised' | 'suspended' | 'resumed';

interface Pending {
  kind: SignalKind;
  key: string;
  at: number;
  check: (d: DigitalHumanProvider) => boolean;
}

const cond = (d: DigitalHumanProvider, type: string) => d.status?.conditions?.find((c) => c.type === type);
const isReady = (d: DigitalHumanProvider) => cond(d, 'Ready')?.status === 'True' && d.status?.observedGeneration === d.metadata.generation;
const CHECKS: Record<SignalKind, (d: DigitalHumanProvider) => boolean> = {
  down: (d) => cond(d, 'Ready')?.status === 'False' && (cond(d, 'Ready')?.message ?? '').includes('reports down'),
  healthy: (d) => !(cond(d, 'Ready')?.message ?? '').includes('reports down'),
  'quota-exhausted': (d) => cond(d, 'QuotaExhausted')?.status === 'True',
  'quota-raised': (d) => cond(d, 'QuotaExhausted')?.status === 'False',
  suspended: (d) => cond(d, 'AccountSuspended')?.status === 'True',
  resumed: (d) => cond(d, 'AccountSuspended')?.status === 'False',
};

/** A small seeded generator, so two runs inject the same sequence. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const vendorCalls = (sim: VendorSimulator) => Object.values(sim.stats().requests).reduce((a, b) => a + b, 0);

export const providerSignals: Scenario = {
  name: 'provider-signals',
  title: 'Provider signals',
  description: `N DigitalHumanProviders over ${ACCOUNTS} vendor accounts (one Secret each) are Ready. A quiet minute with usage growing at the vendor measures the steady state: vendor calls per provider per minute (the operator reads each account with one fleet call per ${OBSERVE_SECONDS} s, ADR 0028) and status writes per provider per minute. Then vendor changes are injected at random (seeded): an instance goes down or comes back, a quota runs out or is raised in the console, an account is suspended or resumed. A watcher in the benchmark process (an informer, as the upstream would watch) times each affected provider from the change at the vendor until its status shows it; a change undone at the vendor before it was visible is counted, not timed (nothing changes to show it). Target: p99 ≤ 10 s, none missed.`,
  async run(ctx) {
    const { session, options } = ctx;
    const n = options.signalProviders;
    const accounts = Array.from({ length: ACCOUNTS }, (_, i) => ({ id: `acct-${i}`, token: `bench-${i}-${randomBytes(8).toString('hex')}` }));
    const sim = await startVendorSimulator({ token: `bench-default-${randomBytes(8).toString('hex')}`, accounts, faults: { rateLimit: { ...options.vendorRateLimit } } });
    let operator: Awaited<ReturnType<typeof startOperator>> | undefined;
    try {
      const ns = await session.createNamespace(SIGNALS_NAMESPACE);
      for (const a of accounts) await session.client.create(SecretKind, { metadata: { name: a.id, namespace: ns, labels: { 'dhp.example.com/vendor-credentials': 'true' } }, stringData: { token: a.token } });
      const names = Array.from({ length: n }, (_, i) => `sig-${String(i).padStart(4, '0')}`);
      const accountOf = new Map(names.map((name, i) => [name, accounts[i % ACCOUNTS]!.id]));
      await pool(names, 16, async (name) => {
        await session.client.create(DigitalHumanProviderKind, {
          metadata: { name, namespace: ns },
          spec: { endpoint: sim.baseUrl, region: 'ap-northeast-1', displayName: `Presenter ${name}`, credentials: { secretRef: { name: accountOf.get(name)!, key: 'token' } } },
        } as DigitalHumanProvider);
      });
      const observed = await observe(session.client, DigitalHumanProviderKind, ns);
      const limit = options.providerClientLimit;
      operator = await startOperator({
        name: 'operator-provider-signals',
        kubeconfigPath: session.kubeconfigPath,
        namespace: ns,
        operators: ['provider'],
        config: {
          provider: {
            healthIntervalSeconds: options.providerHealthSeconds,
            observeIntervalSeconds: OBSERVE_SECONDS,
            maxConcurrentReconciles: options.workers,
            vendor: { caFile: sim.caPath, requestsPerSecond: limit.requestsPerSecond, burst: limit.burst, maxConcurrency: limit.maxConcurrency },
          },
          client: { qps: options.qps, burst: options.burst },
        },
        outDir: session.outDir,
        ...(session.profileDir ? { profileDir: session.profileDir } : {}),
      });
      const all = () => observed.store.list();
      // The account reads take their share of the endpoint's limit while the instances are created.
      const createRate = Math.max(0.5, limit.requestsPerSecond - (ACCOUNTS * 2) / OBSERVE_SECONDS);
      await observed.until(() => all().length === n && all().every((d) => isReady(d) && d.status?.usage !== undefined), 120_000 + (n * 6 * 1000) / createRate, `${n} providers Ready with usage`);
      const steadySeconds = Math.min(STEADY_SECONDS, options.signalSeconds);
      session.log(`provider-signals: ${n} providers Ready; steady state for ${steadySeconds} s`);
      const idOf = (name: string) => observed.store.get({ namespace: ns, name })!.status!.providerID!;

      // Steady state: usage grows (1 call per provider every 2 s), nothing else changes.
      // Status writes of each provider in the window, as the watcher sees them arrive.
      let writes = 0;
      const writeTimes = new Map<string, number[]>();
      const offWrites = observed.onChange((c, at) => {
        if (c.type !== 'update') return;
        writes++;
        const key = c.object.metadata.name!;
        writeTimes.set(key, [...(writeTimes.get(key) ?? []), at]);
      });
      const callsBefore = vendorCalls(sim);
      const t0 = performance.now();
      while (performance.now() - t0 < steadySeconds * 1000) {
        for (const name of names) sim.consume(idOf(name), 1);
        await new Promise((r) => setTimeout(r, 2_000));
      }
      const steadyMinutes = (performance.now() - t0) / 60_000;
      const steadyCalls = vendorCalls(sim) - callsBefore;
      const steadyWrites = writes;
      offWrites();
      const callsPerProviderMinute = steadyCalls / n / steadyMinutes;
      // The bound is an interval (at most one write per usageRefreshSeconds), so a window of 60 s
      // may hold three writes of one provider (at 0, 30 and 60 s): report the shortest interval.
      const gaps = [...writeTimes.values()].flatMap((ts) => ts.slice(1).map((t, i) => t - ts[i]!));
      const shortestWriteGapMs = gaps.length ? Math.min(...gaps) : null;
      const mostWrites = Math.max(0, ...[...writeTimes.values()].map((ts) => ts.length));
      const limitPerProviderMinute = (limit.requestsPerSecond * 60) / n;

      // Signals.
      const rand = seeded(14);
      const pending = new Set<Pending>();
      const latencies: Record<SignalKind, number[]> = { down: [], healthy: [], 'quota-exhausted': [], 'quota-raised': [], suspended: [], resumed: [] };
      let missed = 0;
      /** Changes undone at the vendor before the first was visible: the upstream's view never had to change. */
      let undoneBeforeVisible = 0;
      const settle = (d: DigitalHumanProvider, at: number) => {
        const key = `${d.metadata.namespace}/${d.metadata.name}`;
        for (const p of pending) {
          if (p.key === key && p.check(d)) {
            latencies[p.kind].push(at - p.at);
            pending.delete(p);
          }
        }
      };
      const offSettle = observed.onChange((c, at) => {
        if (c.type !== 'delete') settle(c.object, at);
      });
      const expect = (kind: SignalKind, name: string, at: number) => {
        // A newer change for the same provider and aspect replaces the older expectation.
        for (const p of pending) if (p.key === `${ns}/${name}` && (p.kind === kind || p.kind === opposite(kind))) pending.delete(p);
        // Undone before it was visible (down, then healthy again within a round): what the watcher
        // shows is already right, and nothing will change to say so; timing it until the
        // provider's next unrelated write would measure the usage refresh, not the signal.
        const current = observed.store.get({ namespace: ns, name });
        if (current && CHECKS[kind](current)) {
          undoneBeforeVisible++;
          return;
        }
        pending.add({ kind, key: `${ns}/${name}`, at, check: CHECKS[kind] });
      };
      const down = new Set<string>();
      const exhausted = new Set<string>();
      const suspended = new Set<string>();
      let injected = 0;
      const callsBeforeSignals = vendorCalls(sim);
      const tSignals = performance.now();
      session.log(`provider-signals: injecting vendor changes for ${options.signalSeconds} s`);
      while (performance.now() - tSignals < options.signalSeconds * 1000) {
        const pick = rand();
        const name = names[Math.floor(rand() * n)]!;
        const id = idOf(name);
        const account = accountOf.get(name)!;
        const at = performance.now();
        if (pick < 0.45) {
          if (down.has(name)) {
            sim.setHealth(id, 'healthy');
            down.delete(name);
            expect('healthy', name, at);
          } else {
            sim.setHealth(id, 'down', 'GPU fault');
            down.add(name);
            expect('down', name, at);
          }
        } else if (pick < 0.85) {
          if (suspended.has(account)) continue; // a suspended account's calls are refused, not metered
          const usage = sim.usage(id)!;
          if (exhausted.has(name)) {
            sim.setLimits(id, { dailyQuota: usage.dailyQuota + 10_000 });
            exhausted.delete(name);
            expect('quota-raised', name, at);
          } else {
            sim.setLimits(id, { dailyQuota: Math.max(1, usage.callsToday) });
            const left = sim.usage(id)!.quotaRemaining;
            if (left > 0) sim.consume(id, left);
            exhausted.add(name);
            expect('quota-exhausted', name, at);
          }
        } else {
          const members = names.filter((m) => accountOf.get(m) === account);
          if (suspended.has(account)) {
            sim.resumeAccount(account);
            suspended.delete(account);
            for (const m of members) expect('resumed', m, at);
          } else {
            sim.suspendAccount(account, 'invoice unpaid');
            suspended.add(account);
            for (const m of members) expect('suspended', m, at);
          }
        }
        injected++;
        for (const p of pending) if (performance.now() - p.at > MISS_AFTER_MS) (pending.delete(p), missed++);
        await new Promise((r) => setTimeout(r, 500 + rand() * 1_000));
      }
      // Let the last changes arrive.
      const signalMinutes = (performance.now() - tSignals) / 60_000;
      const signalCalls = vendorCalls(sim) - callsBeforeSignals;
      await observed.until(() => pending.size === 0, MISS_AFTER_MS, 'the last signals to be visible').catch(() => undefined);
      missed += pending.size;
      offSettle();
      await observed.stop();

      const every = Object.values(latencies).flat();
      const s = summarize(every);
      const rows = (Object.entries(latencies) as [SignalKind, number[]][]).map(([kind, xs]) => {
        const k = summarize(xs);
        return [kind, k.count, seconds(k.p50), seconds(k.p99), seconds(k.max)];
      });
      return {
        headline: `change at the vendor → visible to a watcher: p50 ${seconds(s.p50)} s, p99 ${seconds(s.p99)} s (target ≤ 10 s) over ${s.count} provider transitions; steady state ${round(callsPerProviderMinute, 2)} vendor calls and ${round(steadyWrites / n / steadyMinutes, 2)} status writes per provider per minute`,
        figures: {
          providers: n,
          accounts: ACCOUNTS,
          observeIntervalSeconds: OBSERVE_SECONDS,
          signalsInjected: injected,
          transitionsTimed: s.count,
          transitionsMissed: missed,
          changesUndoneBeforeVisible: undoneBeforeVisible,
          visibleP50Seconds: seconds(s.p50),
          visibleP99Seconds: seconds(s.p99),
          visibleMaxSeconds: seconds(s.max),
          p99WithinTarget: s.p99 <= TARGET_P99_MS && missed === 0,
          steadyVendorCallsPerProviderPerMinute: round(callsPerProviderMinute, 2),
          endpointLimitPerProviderPerMinute: round(limitPerProviderMinute, 2),
          steadyCallsShareOfLimit: ratio(callsPerProviderMinute, limitPerProviderMinute),
          steadyStatusWritesPerProviderPerMinute: round(steadyWrites / n / steadyMinutes, 2),
          steadyShortestWriteIntervalSeconds: shortestWriteGapMs === null ? null : seconds(shortestWriteGapMs),
          steadyMostWritesOfOneProvider: mostWrites,
          signalVendorCallsPerProviderPerMinute: round(signalCalls / n / signalMinutes, 2),
        },
        tables: [
          {
            title: `Change at the vendor → visible to a watcher (${n} providers, ${ACCOUNTS} accounts; ${injected} changes injected over ${options.signalSeconds} s)`,
            columns: ['change', 'provider transitions', 'p50 (s)', 'p99 (s)', 'max (s)'],
            rows: [
              ...rows,
              ['all', s.count, seconds(s.p50), seconds(s.p99), seconds(s.max)],
              ['missed (not visible within 60 s)', missed, null, null, null],
              ['undone at the vendor before visible (not timed)', undoneBeforeVisible, null, null, null],
            ],
          },
          {
            title: `Steady state: ${steadySeconds} s with usage growing at the vendor`,
            columns: ['', 'value'],
            rows: [
              ['vendor calls (all routes)', steadyCalls],
              ['vendor calls per provider per minute', round(callsPerProviderMinute, 2)],
              ["the endpoint limit's share per provider per minute", round(limitPerProviderMinute, 2)],
              ['status writes per provider per minute', round(steadyWrites / n / steadyMinutes, 2)],
              ['shortest interval between two status writes of one provider (s; bound 30)', shortestWriteGapMs === null ? null : seconds(shortestWriteGapMs)],
              ['most status writes of one provider in the window', mostWrites],
              ['vendor calls per provider per minute while changes were injected', round(signalCalls / n / signalMinutes, 2)],
            ],
          },
        ],
        charts: [
          {
            title: 'Provider signals: time until visible, by change (sorted)',
            xLabel: 'transition (sorted)',
            yLabel: 'seconds',
            series: (Object.entries(latencies) as [SignalKind, number[]][]).filter(([, xs]) => xs.length).map(([kind, xs]) => ({ name: kind, points: [...xs].sort((a, b) => a - b).map((v, i) => [i + 1, v / 1000] as [number, number]) })),
            threshold: { y: TARGET_P99_MS / 1000, label: 'p99 target (10 s)' },
          },
        ],
        notes: [
          `The operator reads each account (one getAccount plus one listInstanceStates page of up to 200 instances) every ${OBSERVE_SECONDS} s through the endpoint's shared limiter (${limit.requestsPerSecond}/s); state changes are written at once, usage figures at most every 30 s per provider.`,
          'A suspension affects every provider of the account at once; each is one timed transition.',
        ],
      };
    } finally {
      await operator?.stop();
      await sim.stop();
    }
  },
};

function opposite(kind: SignalKind): SignalKind {
  const pairs: Record<SignalKind, SignalKind> = { down: 'healthy', healthy: 'down', 'quota-exhausted': 'quota-raised', 'quota-raised': 'quota-exhausted', suspended: 'resumed', resumed: 'suspended' };
  return pairs[kind];
}
