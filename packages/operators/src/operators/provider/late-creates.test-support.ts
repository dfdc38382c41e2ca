/**
 * Test support for the late-create sweep's unit tests (named `*.test-support.ts`, so the
 * package's files rule keeps it out of the published build): a sweep over one vendor account
 * (every key's token is `token`, no provider is live), on a ConfigMap client, a vendor and a fake
 * clock the test provides. The sweep against a real API server is tested in test/integration.
 * @module
 */
import { pino } from 'pino';
import type { EventSink, FakeClock, KubeClient, Store } from '@converge/runtime';
import type { DigitalHumanProvider } from './api/schema-free.ts';
import { LateCreateSweep } from './late-creates.ts';
import type { LateCreateSweepOptions } from './late-creates.ts';
import type { VendorApi, VendorApis } from './vendor-api.ts';

export function sweepOver(client: KubeClient, api: VendorApi, clock: FakeClock, timing: Pick<LateCreateSweepOptions, 'settleMs' | 'windowMs' | 'maxGapMs'>): LateCreateSweep {
  return new LateCreateSweep({
    client,
    namespace: 'converge',
    vendors: { forEndpoint: () => api } as Pick<VendorApis, 'forEndpoint'>,
    credentials: { token: async () => 'token' },
    providers: { get: () => undefined } as unknown as Store<DigitalHumanProvider>,
    events: { normal: () => undefined, warning: () => undefined } as unknown as EventSink,
    clock,
    log: pino({ level: 'silent' }),
    ...timing,
  });
}
