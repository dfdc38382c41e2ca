/**
 * Quotas, metering and account state (issue 14) on the local control plane against the vendor
 * simulator: limits converged on create and on a spec change, console drift repaired with an
 * Event, and each transition the upstream waits for — quota exhausted and back, account
 * suspended and resumed, throttled and clear, a scale recommendation — shown by
 * `kubectl wait --for=condition=…`, as the upstream would wait for it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { EventKind } from '@converge/runtime';
import { DigitalHumanProviderKind } from '../../../packages/operators/src/operators/provider/index.ts';
import type { DigitalHumanProvider } from '../../../packages/operators/src/operators/provider/index.ts';
import { eventually, kubeconfigPath, sleep } from '../../support/operator-harness.ts';
import { setupProviders, provider, waitFor, isReady, ready, instancesOf, type ProviderEnv } from './support.ts';

const execFileAsync = promisify(execFile);

/** The upstream's wait: `kubectl wait --for=condition=<cond>` on one provider. */
async function kubectlWait(env: ProviderEnv, name: string, condition: string, timeoutSeconds = 30): Promise<void> {
  const { stdout } = await execFileAsync('kubectl', ['--kubeconfig', kubeconfigPath(), '-n', env.ns, 'wait', `--for=condition=${condition}`, `dhp/${name}`, `--timeout=${timeoutSeconds}s`]);
  assert.match(stdout, /condition met/);
}

const cond = (d: DigitalHumanProvider, type: string) => d.status?.conditions?.find((c) => c.type === type);
const get = (env: ProviderEnv, name: string) => env.client.get(DigitalHumanProviderKind, { namespace: env.ns, name });
const limitWrites = (env: ProviderEnv) => env.sim.stats().requests['PATCH /v1/instances/{id}/limits'] ?? 0;
const events = async (env: ProviderEnv, name: string) => (await env.client.list(EventKind, { namespace: env.ns })).items.filter((e) => e.regarding?.name === name);

/** Fast observation for tests: the account is read every second. */
const FAST = { provider: { observeIntervalSeconds: 1, usageRefreshSeconds: 2 } };

async function readyOne(env: ProviderEnv, name: string, extra: Partial<DigitalHumanProvider['spec']> = {}): Promise<{ dhp: DigitalHumanProvider; id: string }> {
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, name, env.sim.baseUrl, extra));
  const dhp = await waitFor(env.client, env.ns, name, isReady, `${name} Ready`);
  return { dhp, id: dhp.status!.providerID! };
}

test('limits: converged on create and on a spec change, console drift repaired with an Event, no write when they agree', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t, FAST);
  const { dhp, id } = await readyOne(env, 'lim', { limits: { dailyQuota: 500, requestsPerMinute: 120 } });
  assert.deepEqual(env.sim.instances().find((i) => i.id === id)!.limits, { maxConcurrency: 10, requestsPerMinute: 120, dailyQuota: 500 }, 'set fields converged, maxConcurrency left as the vendor has it');
  assert.deepEqual(dhp.status?.limits, { maxConcurrency: 10, requestsPerMinute: 120, dailyQuota: 500 });
  assert.equal(limitWrites(env), 1, 'one write on create');

  await env.client.patch(DigitalHumanProviderKind, { namespace: env.ns, name: 'lim' }, { type: 'merge', body: { spec: { limits: { dailyQuota: 800 } } } });
  const second = await waitFor(env.client, env.ns, 'lim', (d) => isReady(d) && d.metadata.generation === 2 && d.status?.limits?.dailyQuota === 800, 'limits for generation 2');
  assert.equal(env.sim.instances().find((i) => i.id === id)!.limits.dailyQuota, 800);
  assert.equal(second.status?.observedGeneration, 2);
  assert.equal(limitWrites(env), 2);

  // Someone raises the quota in the vendor console: repaired, and an Event says what was found.
  env.sim.setLimits(id, { dailyQuota: 5 });
  await eventually(() => env.sim.instances().find((i) => i.id === id)!.limits.dailyQuota === 800, { what: 'console drift repaired', timeoutMs: 15_000 });
  const drift = await eventually(async () => (await events(env, 'lim')).find((e) => e.reason === 'LimitsDriftRepaired'), { what: 'LimitsDriftRepaired Event' });
  assert.equal(drift.type, 'Warning');
  assert.match(drift.note ?? '', /dailyQuota was 5 at the vendor.*set back to 800/);

  // A maxConcurrency change in the console is not drift: the spec does not set it.
  env.sim.setLimits(id, { maxConcurrency: 3 });
  const writes = limitWrites(env);
  await sleep(3_000);
  assert.equal(limitWrites(env), writes, 'nothing written while vendor and spec agree');
  assert.equal(env.sim.instances().find((i) => i.id === id)!.limits.maxConcurrency, 3);
  await waitFor(env.client, env.ns, 'lim', (d) => d.status?.limits?.maxConcurrency === 3, 'status.limits shows the limits in force');
});

test('quota consumed → QuotaExhausted, Ready False with that reason → quota day advanced → Ready', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t, FAST);
  const { id } = await readyOne(env, 'quota', { limits: { dailyQuota: 10 } });
  await kubectlWait(env, 'quota', 'QuotaExhausted=false');
  env.sim.consume(id, 10);
  await kubectlWait(env, 'quota', 'QuotaExhausted');
  await kubectlWait(env, 'quota', 'Ready=false');
  const exhausted = await get(env, 'quota');
  assert.equal(ready(exhausted)?.reason, 'QuotaExhausted');
  assert.match(ready(exhausted)?.message ?? '', /0 of 10 calls left today; the quota resets at/);
  assert.equal(exhausted.status?.limitedBy, 'QuotaExhausted');
  assert.equal(exhausted.status?.usage?.quotaRemaining, 0);
  assert.equal(exhausted.status?.usable, false);

  env.sim.advanceQuotaDay();
  await kubectlWait(env, 'quota', 'Ready');
  const back = await get(env, 'quota');
  assert.equal(cond(back, 'QuotaExhausted')?.status, 'False');
  assert.equal(back.status?.usage?.callsToday, 0);
  assert.equal(back.status?.limitedBy, undefined);
  assert.equal(back.status?.usable, true);
});

test('account suspended → AccountSuspended, Ready False with that reason and the vendor\'s words → resumed → Ready', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t, FAST);
  await readyOne(env, 'acct');
  env.sim.suspendAccount(undefined, 'invoice 2025-01 unpaid');
  await kubectlWait(env, 'acct', 'AccountSuspended');
  await kubectlWait(env, 'acct', 'Ready=false');
  const suspended = await get(env, 'acct');
  assert.deepEqual([ready(suspended)?.reason, cond(suspended, 'AccountSuspended')?.reason, suspended.status?.limitedBy], ['AccountSuspended', 'NonPayment', 'AccountSuspended']);
  assert.match(ready(suspended)?.message ?? '', /vendor account default is suspended \(NonPayment: invoice 2025-01 unpaid\)/);
  env.sim.resumeAccount();
  await kubectlWait(env, 'acct', 'AccountSuspended=false');
  await kubectlWait(env, 'acct', 'Ready');
  assert.ok(!env.logs.some((l) => l.includes(env.token)), 'the token never appears in a log line');
});

test('a provider created while its account is suspended (the create refused with 403) carries AccountSuspended=True too, and recovers on resume', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t, FAST);
  env.sim.suspendAccount(undefined, 'invoice 2025-02 unpaid');
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'born-suspended', env.sim.baseUrl));
  const suspended = await waitFor(env.client, env.ns, 'born-suspended', (d) => ready(d)?.reason === 'AccountSuspended' && cond(d, 'AccountSuspended')?.status === 'True', 'Ready AccountSuspended and AccountSuspended=True', 30_000);
  assert.equal(suspended.status?.limitedBy, 'AccountSuspended');
  assert.match(cond(suspended, 'AccountSuspended')?.message ?? '', /suspended/i);
  env.sim.resumeAccount();
  const back = await waitFor(env.client, env.ns, 'born-suspended', isReady, 'Ready once resumed', 60_000);
  assert.equal(cond(back, 'AccountSuspended')?.status, 'False');
});

test('throttling → RateLimited (Ready stays True) → clears; the vendor\'s health message shows in Ready', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t, FAST);
  const { id } = await readyOne(env, 'rate');
  env.sim.throttle(id, 7);
  await kubectlWait(env, 'rate', 'RateLimited');
  const limited = await get(env, 'rate');
  assert.equal(ready(limited)?.status, 'True', 'throttled is slowed, not unusable');
  assert.equal(limited.status?.limitedBy, 'RateLimited');
  assert.equal(limited.status?.usage?.throttledRequests, 7);
  env.sim.clearThrottle(id);
  await kubectlWait(env, 'rate', 'RateLimited=false');
  assert.equal((await get(env, 'rate')).status?.limitedBy, undefined);

  // Issue 18 item 6: the vendor's own words, not just "degraded".
  env.sim.setHealth(id, 'degraded', 'GPU hot');
  const degraded = await waitFor(env.client, env.ns, 'rate', (d) => ready(d)?.reason === 'ProviderDegraded', 'ProviderDegraded');
  assert.match(ready(degraded)?.message ?? '', /is degraded: GPU hot/);
  env.sim.setHealth(id, 'down', 'maintenance until 14:00');
  await kubectlWait(env, 'rate', 'Ready=false');
  assert.match(ready(await get(env, 'rate'))?.message ?? '', /reports down: maintenance until 14:00/);
});

test('usage at 80 % of the quota → ScaleRecommended with a recommendation; the operator never raises the limit', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t, FAST);
  const { id } = await readyOne(env, 'rec', { limits: { dailyQuota: 100 } });
  await kubectlWait(env, 'rec', 'ScaleRecommended=false');
  env.sim.consume(id, 85);
  await kubectlWait(env, 'rec', 'ScaleRecommended');
  const rec = await get(env, 'rec');
  assert.equal(cond(rec, 'ScaleRecommended')?.reason, 'QuotaNearlyUsed');
  assert.match(rec.status?.recommendation ?? '', /85 % of the daily quota used.*raise spec\.limits\.dailyQuota above 100.*does not change limits/);
  assert.equal(ready(rec)?.status, 'True');
  assert.equal(env.sim.instances().find((i) => i.id === id)!.limits.dailyQuota, 100, 'a recommendation, never an action');
  assert.equal(instancesOf(env.sim, rec).length, 1, 'no instance created');
});

test('issue 18 item 7: input the vendor refuses is VendorRejected and waits for a change; transient failures are EnsureFailed and retried', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t, FAST);
  env.sim.setFaults({ errors: { rate: 1, status: 400, ops: ['create'] } });
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'refused', env.sim.baseUrl));
  const refused = await waitFor(env.client, env.ns, 'refused', (d) => ready(d)?.reason === 'VendorRejected', 'VendorRejected');
  assert.match(ready(refused)?.message ?? '', /the vendor refused .*HTTP 400.*sent again when the spec changes, and every 600 s while it does not/);
  const creates = env.sim.stats().requests['POST /v1/instances'];
  await sleep(4_000);
  assert.equal(env.sim.stats().requests['POST /v1/instances'], creates, 'not retried while nothing changed');
  // A transient failure is retried by itself.
  env.sim.setFaults({ errors: { rate: 1, status: 503, ops: ['create'] } });
  await env.client.patch(DigitalHumanProviderKind, { namespace: env.ns, name: 'refused' }, { type: 'merge', body: { spec: { displayName: 'again' } } });
  await waitFor(env.client, env.ns, 'refused', (d) => ready(d)?.reason === 'EnsureFailed' && d.metadata.generation === 2, 'EnsureFailed');
  env.sim.clearFaults();
  await waitFor(env.client, env.ns, 'refused', isReady, 'Ready once the vendor recovers', 60_000);
});

test('input the vendor refused is sent again after provider.rejectedRetrySeconds with the spec unchanged: the vendor may accept it later', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t, { provider: { ...FAST.provider, rejectedRetrySeconds: 3 } });
  env.sim.setFaults({ errors: { rate: 1, status: 400, ops: ['create'] } });
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'later', env.sim.baseUrl));
  const refused = await waitFor(env.client, env.ns, 'later', (d) => ready(d)?.reason === 'VendorRejected', 'VendorRejected');
  assert.match(ready(refused)?.message ?? '', /every 3 s while it does not/);
  // The vendor now accepts the same input (its refusal lifted); nothing in the cluster changes.
  env.sim.clearFaults();
  const accepted = await waitFor(env.client, env.ns, 'later', isReady, 'Ready once the same create is sent again', 60_000);
  assert.equal(accepted.metadata.generation, refused.metadata.generation, 'no spec change was needed');
  // Sent again on the interval, not on every periodic check.
  assert.ok(env.sim.stats().requests['POST /v1/instances']! <= 20, `${env.sim.stats().requests['POST /v1/instances']} creates`);
});

test('kubectl get dhp shows region, ready, quota left and the limiting reason', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t, FAST);
  const { id } = await readyOne(env, 'cols', { limits: { dailyQuota: 50 } });
  env.sim.consume(id, 50);
  await kubectlWait(env, 'cols', 'QuotaExhausted');
  const { stdout } = await execFileAsync('kubectl', ['--kubeconfig', kubeconfigPath(), '-n', env.ns, 'get', 'dhp']);
  assert.match(stdout.split('\n')[0]!, /NAME\s+REGION\s+READY\s+QUOTA LEFT\s+LIMITED BY\s+AGE/);
  assert.match(stdout, /cols\s+ap-northeast-1\s+False\s+0\s+QuotaExhausted/);
});

test('upstream selection: one line lists the usable providers of a region, best first — converge providers and kubectl agree', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t, FAST);
  const a = await readyOne(env, 'eu-a', { region: 'eu-west-1', limits: { dailyQuota: 1000 } });
  const b = await readyOne(env, 'eu-b', { region: 'eu-west-1', limits: { dailyQuota: 1000 } });
  const c = await readyOne(env, 'eu-c', { region: 'eu-west-1', limits: { dailyQuota: 1000, requestsPerMinute: 5000 } });
  await readyOne(env, 'ap-a', { region: 'ap-northeast-1' });
  env.sim.consume(a.id, 300); // 700 left
  env.sim.consume(b.id, 100); // 900 left: best
  env.sim.consume(c.id, 1000); // none left: not usable
  await kubectlWait(env, 'eu-c', 'QuotaExhausted');
  // Figures alone are written within the 2 s refresh of these tests.
  await waitFor(env.client, env.ns, 'eu-a', (d) => d.status?.usage?.quotaRemaining === 700, 'eu-a figures');
  await waitFor(env.client, env.ns, 'eu-b', (d) => d.status?.usage?.quotaRemaining === 900, 'eu-b figures');

  const { stdout: picked } = await execFileAsync(process.execPath, ['packages/operators/src/cli/main.ts', 'providers', '-n', env.ns, '--region', 'eu-west-1', '-o', 'name', '--kubeconfig', kubeconfigPath()]);
  assert.deepEqual(picked.trim().split('\n'), [`${env.ns}/eu-b`, `${env.ns}/eu-a`]);
  const { stdout: kubectl } = await execFileAsync('kubectl', [
    '--kubeconfig', kubeconfigPath(), '-n', env.ns, 'get', 'dhp',
    '--field-selector', 'spec.region=eu-west-1,status.usable=true',
    '--sort-by=.status.usage.quotaRemaining', '-o', 'name',
  ]);
  assert.deepEqual(kubectl.trim().split('\n').reverse(), ['digitalhumanprovider.dhp.example.com/eu-b', 'digitalhumanprovider.dhp.example.com/eu-a'], 'most quota left first (read bottom-up)');
  const { stdout: table } = await execFileAsync(process.execPath, ['packages/operators/src/cli/main.ts', 'providers', '-n', env.ns, '--all', '--kubeconfig', kubeconfigPath()]);
  assert.match(table, /1\s+\S+\s+ap-a\s+ap-northeast-1\s+yes\s+10000\s+-\s+ProviderReady/);
  assert.match(table, /eu-c\s+eu-west-1\s+no\s+0\s+QuotaExhausted/);
});

test('absurd limits and regions the vendor refuses are rejected by the schema, with messages naming the field and the bound', { timeout: 60_000 }, async (t) => {
  const env = await setupProviders(t, { startOperator: false });
  const cases: [string, Partial<DigitalHumanProvider['spec']>, RegExp][] = [
    ['negative', { limits: { dailyQuota: -5 } }, /spec\.limits\.dailyQuota: Invalid value: -5: spec\.limits\.dailyQuota in body should be greater than or equal to 1/],
    ['zero', { limits: { maxConcurrency: 0 } }, /spec\.limits\.maxConcurrency: Invalid value: 0: .*greater than or equal to 1/],
    ['huge', { limits: { requestsPerMinute: 5_000_000 } }, /spec\.limits\.requestsPerMinute: Invalid value: 5000000: .*less than or equal to 1000000/],
    ['huge quota', { limits: { dailyQuota: 1e12 } }, /spec\.limits\.dailyQuota: Invalid value: 1000000000000: .*less than or equal to 1000000000/],
    ['fraction', { limits: { dailyQuota: 1.5 } as never }, /spec\.limits\.dailyQuota: Invalid value: "float64": spec\.limits\.dailyQuota in body must be of type int64/],
    ['text', { limits: { dailyQuota: 'lots' } as never }, /spec\.limits\.dailyQuota: Invalid value: "string": spec\.limits\.dailyQuota in body must be of type integer/],
    ['region', { region: 'Mars 1' }, /spec\.region: Invalid value: "Mars 1": region must be lower-case letters, digits and dashes, starting and ending with a letter or digit, as the vendor names its regions \(e\.g\. ap-northeast-1\)/],
    ['region dash', { region: '-eu' }, /spec\.region: Invalid value: "-eu": region must be lower-case letters/],
  ];
  for (const [name, spec, message] of cases) {
    const err = await env.client.create(DigitalHumanProviderKind, provider(env.ns, `bad-${name.replace(' ', '-')}`, env.sim.baseUrl, spec)).then(() => undefined, (e: unknown) => e as Error);
    assert.ok(err, `${name}: accepted`);
    assert.match(err.message, message, name);
    assert.ok(err.message.length < 600, `${name}: a readable length (${err.message.length})`);
  }
  // The bounds themselves are accepted.
  await env.client.create(DigitalHumanProviderKind, provider(env.ns, 'bounds', env.sim.baseUrl, { region: 'a', limits: { maxConcurrency: 10_000, requestsPerMinute: 1, dailyQuota: 1_000_000_000 } }));
});
