/**
 * Repair: owned Services of the converged fleet are deleted one at a time; how long until each
 * is recreated (a Service with the same name and a new UID seen by the benchmark's watch)?
 * The next deletion waits until the Microservice is Ready again.
 * @module
 */
import { ServiceKind } from '@converge/runtime';
import { isReady } from '../support/observer.ts';
import { round, summarize } from '../support/stats.ts';
import type { Scenario } from './types.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const repair: Scenario = {
  name: 'repair',
  title: 'Repair',
  description:
    'Owned Services of the converged fleet are deleted one at a time (spread over the fleet). The time runs from just before the DELETE request until the benchmark\'s watch sees a Service of the same name with a new UID. Before the next deletion the Microservice must be Ready again.',
  async run(ctx) {
    const { session, options } = ctx;
    const fleet = await ctx.fleet();
    const n = fleet.names.length;
    const count = Math.min(options.repairs, n);
    const stride = Math.max(1, Math.floor(n / count));
    const samples: number[] = [];
    const readyAgain: number[] = [];
    session.log(`repair: deleting ${count} owned Services one at a time`);
    for (let i = 0; i < count; i++) {
      const name = fleet.names[(i * stride) % n]!;
      const key = `${fleet.namespace}/${name}`;
      const old = fleet.services.store.get(key);
      if (!old) throw new Error(`Service ${key} is not there to delete`);
      const recreated = fleet.services.until(() => {
        const s = fleet.services.store.get(key);
        return s !== undefined && s.metadata.uid !== old.metadata.uid;
      }, 60_000, `Service ${key} recreated`);
      const t0 = performance.now();
      await session.client.delete(ServiceKind, { namespace: fleet.namespace, name });
      const t1 = await recreated;
      samples.push(t1 - t0);
      const ready = await fleet.microservices.until(() => {
        const ms = fleet.microservices.store.get(key);
        return ms !== undefined && isReady(ms) && fleet.services.store.get(key)?.metadata.uid !== old.metadata.uid;
      }, 60_000, `${key} Ready after its Service was recreated`);
      readyAgain.push(ready - t0);
      await sleep(100);
    }
    const s = summarize(samples);
    return {
      headline: `${count} deleted Services recreated: p50 ${round(s.p50, 0)} ms, p99 ${round(s.p99, 0)} ms`,
      figures: {
        repairs: count,
        recreatedP50Ms: round(s.p50, 0),
        recreatedP90Ms: round(s.p90, 0),
        recreatedP99Ms: round(s.p99, 0),
        recreatedMaxMs: round(s.max, 0),
        readyAgainP50Ms: round(summarize(readyAgain).p50, 0),
        readyAgainP99Ms: round(summarize(readyAgain).p99, 0),
      },
      tables: [
        {
          title: `${count} owned Services deleted one at a time (fleet of ${n})`,
          columns: ['', 'p50 (ms)', 'p90 (ms)', 'p99 (ms)', 'max (ms)'],
          rows: [
            ['DELETE sent → Service recreated', round(s.p50, 0), round(s.p90, 0), round(s.p99, 0), round(s.max, 0)],
            ['DELETE sent → Microservice Ready again', round(summarize(readyAgain).p50, 0), round(summarize(readyAgain).p90, 0), round(summarize(readyAgain).p99, 0), round(summarize(readyAgain).max, 0)],
          ],
        },
      ],
      charts: [],
      notes: count < 100 ? [`With ${count} samples, p99 is the largest or second-largest sample.`] : [],
    };
  },
};
