/**
 * Providers: N DigitalHumanProviders exist before their operator starts, against the vendor
 * simulator with a rate limit. How long until all are Ready, how many vendor calls per CR, how
 * many 429s? The operator's own per-endpoint limit is set just under the vendor's, as it should
 * be configured; the achieved vendor request rate ÷ that limit says how much of the allowed
 * budget the operator actually used (1.0 = the limit was the only bottleneck).
 * @module
 */
import { randomBytes } from 'node:crypto';
import { SecretKind } from '@converge/runtime';
import { DigitalHumanProviderKind } from '../../packages/operators/src/operators/provider/index.ts';
import type { DigitalHumanProvider } from '../../packages/operators/src/operators/provider/index.ts';
import { startVendorSimulator } from '../../packages/operators/src/vendor-sim/index.ts';
import { pool } from '../support/fixtures.ts';
import { observe } from '../support/observer.ts';
import { startOperator } from '../support/operator.ts';
import { ratio, round, seconds } from '../support/stats.ts';
import { curve } from './cold-start.ts';
import type { Scenario } from './types.ts';

export const PROVIDERS_NAMESPACE = 'bench-providers';

const isReady = (d: DigitalHumanProvider) => {
  const ready = d.status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' && ready.observedGeneration === d.metadata.generation && d.status?.observedGeneration === d.metadata.generation;
};

export const providers: Scenario = {
  name: 'providers',
  title: 'Providers',
  description:
    'N DigitalHumanProviders (one Secret with the vendor token) exist before the provider operator starts; the vendor simulator enforces a rate limit (429 with Retry-After beyond it) and the operator is configured with a per-endpoint limit just under it. Time runs from the operator\'s spawn until every provider is Ready for its generation; vendor calls and 429s are counted by the simulator.',
  async run(ctx) {
    const { session, options } = ctx;
    const n = options.providers;
    const token = `bench-${randomBytes(8).toString('hex')}`;
    const sim = await startVendorSimulator({ token, faults: { rateLimit: { ...options.vendorRateLimit } } });
    let operator: Awaited<ReturnType<typeof startOperator>> | undefined;
    try {
      const ns = await session.createNamespace(PROVIDERS_NAMESPACE);
      await session.client.create(SecretKind, { metadata: { name: 'vendor-creds', namespace: ns, labels: { 'dhp.example.com/vendor-credentials': 'true' } }, stringData: { token } });
      const names = Array.from({ length: n }, (_, i) => `dhp-${String(i).padStart(4, '0')}`);
      await pool(names, 16, async (name) => {
        await session.client.create(DigitalHumanProviderKind, {
          metadata: { name, namespace: ns },
          spec: { endpoint: sim.baseUrl, region: 'ap-northeast-1', displayName: `Presenter ${name}`, credentials: { secretRef: { name: 'vendor-creds', key: 'token' } } },
        } as DigitalHumanProvider);
      });
      const observed = await observe(session.client, DigitalHumanProviderKind, ns);
      const readyAt = new Map<string, number>();
      observed.onChange((c, at) => {
        const key = `${c.object.metadata.namespace}/${c.object.metadata.name}`;
        if (c.type !== 'delete' && isReady(c.object) && !readyAt.has(key)) readyAt.set(key, at);
      });
      sim.reset({ stats: true, faults: false });
      const limit = options.providerClientLimit;
      session.log(`providers: ${n} providers, vendor limit ${options.vendorRateLimit.requestsPerSecond}/s, operator limit ${limit.requestsPerSecond}/s`);
      const t0 = performance.now();
      operator = await startOperator({
        name: 'operator-providers',
        kubeconfigPath: session.kubeconfigPath,
        namespace: ns,
        operators: ['provider'],
        config: {
          provider: {
            healthIntervalSeconds: options.providerHealthSeconds,
            maxConcurrentReconciles: options.workers,
            vendor: { caFile: sim.caPath, requestsPerSecond: limit.requestsPerSecond, burst: limit.burst, maxConcurrency: limit.maxConcurrency },
          },
          client: { qps: options.qps, burst: options.burst },
        },
        outDir: session.outDir,
        ...(session.profileDir ? { profileDir: session.profileDir } : {}),
      });
      const progress = setInterval(() => session.log(`providers: ${readyAt.size}/${n} Ready`), 10_000);
      let tReady: number;
      try {
        // Vendor calls are paced by the limit: allow twice the time the limit needs for 5 calls each.
        tReady = await observed.until(() => readyAt.size >= n, 120_000 + (n * 5 * 2_000) / limit.requestsPerSecond, `${n} providers Ready`);
      } finally {
        clearInterval(progress);
      }
      const elapsedMs = tReady - t0;
      const stats = sim.stats();
      const calls = Object.values(stats.requests).reduce((a, b) => a + b, 0);
      const achievedRps = calls / (elapsedMs / 1000);
      await observed.stop();
      return {
        headline: `${n} providers Ready in ${seconds(elapsedMs)} s; ${round(calls / n, 2)} vendor calls per provider, ${stats.rateLimited} × 429; ${ratio(achievedRps, limit.requestsPerSecond)} × the operator's vendor limit used`,
        figures: {
          providers: n,
          vendorLimitPerSecond: options.vendorRateLimit.requestsPerSecond,
          operatorLimitPerSecond: limit.requestsPerSecond,
          readySeconds: seconds(elapsedMs),
          vendorCalls: calls,
          vendorCallsPerProvider: round(calls / n, 2),
          vendorCreates: stats.creates,
          rateLimited429: stats.rateLimited,
          achievedVendorRps: round(achievedRps, 2),
          limitUtilization: ratio(achievedRps, limit.requestsPerSecond),
        },
        tables: [
          {
            title: `${n} DigitalHumanProviders; vendor limit ${options.vendorRateLimit.requestsPerSecond}/s (burst ${options.vendorRateLimit.burst}); operator limit ${limit.requestsPerSecond}/s (burst ${limit.burst}, ${limit.maxConcurrency} in flight)`,
            columns: ['', 'value'],
            rows: [
              ['all Ready (s)', seconds(elapsedMs)],
              ['vendor calls', calls],
              ['vendor calls per provider', round(calls / n, 2)],
              ['instances created', stats.creates],
              ['429s received', stats.rateLimited],
              ['achieved vendor rate (/s)', round(achievedRps, 2)],
              ['achieved ÷ operator limit', ratio(achievedRps, limit.requestsPerSecond)],
            ],
          },
          {
            title: 'Vendor calls by route until all Ready',
            columns: ['route', 'calls', 'per provider'],
            rows: Object.entries(stats.requests).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, v, round(v / n, 2)]),
          },
        ],
        charts: [
          {
            title: `Providers: Ready over time (N = ${n}, vendor limit ${options.vendorRateLimit.requestsPerSecond}/s)`,
            xLabel: 'seconds since start',
            yLabel: 'providers Ready',
            series: [curve('Ready', [...readyAt.values()].map((t) => t - t0).sort((a, b) => a - b))],
          },
        ],
        notes: [
          `Health is re-checked every ${options.providerHealthSeconds} s per provider; those calls share the vendor budget with the creates.`,
        ],
      };
    } finally {
      await operator?.stop();
      await sim.stop();
    }
  },
};
