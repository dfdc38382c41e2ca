/**
 * Checklist item 10, "bad input": the corpus in support/bad-input-corpus.ts (schema and CEL
 * violations, absurd sizes, unknown fields, wrong types, broken bodies; both kinds; creates and
 * updates) is sent to the API server while `converge run` works in the same namespace.
 * Each entry is either rejected with a readable message that names the offending field (no
 * stack trace, a bounded length), or — where it gets through — settled by the operator: it
 * converges (unknown fields pruned, status ignored) or reports `Ready=False` with a stable reason
 * for its generation. The operator never crashes or stalls: it keeps converging a good object of
 * each kind in the same namespace, before and after the corpus.
 *
 * The pure desired-state and diff functions have property tests beside them
 * (packages/operators/src/operators/microservice/{desired-state,contains,update-body.property}.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SecretKind } from '@converge/runtime';
import { MicroserviceKind } from '../../packages/operators/src/operators/microservice/index.ts';
import type { Microservice } from '../../packages/operators/src/operators/microservice/index.ts';
import { DigitalHumanProviderKind } from '../../packages/operators/src/operators/provider/index.ts';
import type { DigitalHumanProvider } from '../../packages/operators/src/operators/provider/index.ts';
import { testCluster } from '../support/cluster.ts';
import { eventually } from '../support/operator-harness.ts';
import { reliabilityEnv, reliabilityReport, waitConverged, describe, Churn, random } from './support/index.ts';
import { corpus } from './support/bad-input-corpus.ts';
import type { CorpusEntry } from './support/bad-input-corpus.ts';

const PATHS = { ms: 'apis/platform.example.io/v1alpha1', dhp: 'apis/dhp.example.com/v1alpha1' } as const;
const PLURAL = { ms: 'microservices', dhp: 'digitalhumanproviders' } as const;
const MAX_MESSAGE = 2_048;

test(`a corpus of ${corpus.length} malformed objects: each rejected readably or settled, the operator never stalls`, { timeout: 300_000 }, async (t) => {
  const fig = reliabilityReport(t, 10, 'Bad input corpus');
  const cluster = await testCluster();
  const env = await reliabilityEnv(t, 'rel-bad', { resyncSeconds: 2, healthIntervalSeconds: 2 });
  await env.client.create(SecretKind, { metadata: { name: 'wrong-creds', namespace: env.ns, labels: { 'dhp.example.com/vendor-credentials': 'true' } }, stringData: { token: `wrong-${env.token}` } });
  // The right token, in a Secret that did not opt in to being sent, and one no header can carry.
  await env.client.create(SecretKind, { metadata: { name: 'unlabelled-creds', namespace: env.ns }, stringData: { token: env.token } });
  await env.client.create(SecretKind, { metadata: { name: 'wrapped-creds', namespace: env.ns, labels: { 'dhp.example.com/vendor-credentials': 'true' } }, stringData: { token: `${env.token.slice(0, 8)}\n${env.token.slice(8)}` } });
  const operator = env.startReplica('operator');
  const churn = new Churn({ client: env.client, ns: env.ns, rng: random.seeded(10), endpoint: env.sim.baseUrl });
  await churn.createMicroservice('good');
  await churn.createProvider('good-dhp');
  const first = await waitConverged(env.client, env.ns, env.sim, { ...churn.expect, timeoutMs: 60_000 });
  assert.ok(first.converged, describe(first));

  const ctx = { ns: env.ns, endpoint: env.sim.baseUrl };
  const problems: string[] = [];
  const accepted: CorpusEntry[] = [];
  let rejected = 0;
  let longest = 0;
  const good = { ms: 'good', dhp: 'good-dhp' } as const;
  for (const entry of corpus) {
    const collection = `/${PATHS[entry.kind]}/namespaces/${env.ns}/${PLURAL[entry.kind]}`;
    const res = entry.patch
      ? await cluster.request('PATCH', `${collection}/${good[entry.kind]}`, entry.patch(ctx), { contentType: 'application/merge-patch+json' })
      : await cluster.request('POST', `${collection}${entry.query ? `?${entry.query}` : ''}`, entry.body!(ctx), entry.contentType ? { contentType: entry.contentType } : {});
    const message: string = typeof res.body === 'object' && res.body ? String(res.body.message ?? '') : String(res.body ?? '');
    if ('reject' in entry.expect) {
      const statuses = [entry.expect.reject].flat();
      const wrong: string[] = [];
      if (!statuses.includes(res.status)) wrong.push(`status ${res.status}, want ${statuses.join('|')}`);
      if (!entry.expect.message.test(message)) wrong.push(`message does not match ${entry.expect.message}`);
      if (message.length > MAX_MESSAGE) wrong.push(`message of ${message.length} characters`);
      if (/goroutine|panic|runtime error/i.test(message)) wrong.push('message carries a stack trace');
      if (wrong.length) problems.push(`${entry.id} (${entry.what}): ${wrong.join('; ')}: ${message.slice(0, 300)}`);
      else rejected++;
      longest = Math.max(longest, message.length);
      t.diagnostic(`${entry.id}: ${res.status} ${message.slice(0, 200)}${message.length > 200 ? '…' : ''}`);
    } else if (res.status !== 201) {
      problems.push(`${entry.id} (${entry.what}) should get through, got ${res.status}: ${message.slice(0, 300)}`);
    } else {
      accepted.push(entry);
      t.diagnostic(`${entry.id}: accepted (${entry.what})`);
    }
  }

  // What got through is settled by the operator: converged, or a stable reason for its generation.
  const settledAt = Date.now();
  const outcomes = new Map<string, string>();
  await eventually(async () => {
    for (const entry of accepted) {
      const name = (entry.body!(ctx) as { metadata: { name: string } }).metadata.name;
      const obj: Microservice | DigitalHumanProvider = entry.kind === 'ms'
        ? await env.client.get(MicroserviceKind, { namespace: env.ns, name })
        : await env.client.get(DigitalHumanProviderKind, { namespace: env.ns, name });
      const ready = obj.status?.conditions?.find((c) => c.type === 'Ready');
      const current = ready?.observedGeneration === obj.metadata.generation && obj.status?.observedGeneration === obj.metadata.generation;
      const outcome = !current ? 'pending' : ready?.status === 'True' ? 'converges' : `${ready?.reason}`;
      outcomes.set(entry.id, outcome);
    }
    return accepted.every((e) => outcomes.get(e.id) === (typeof (e.expect as { accept: unknown }).accept === 'string' ? 'converges' : ((e.expect as { accept: { reason: string } }).accept.reason)));
  }, { timeoutMs: 90_000, intervalMs: 500, what: 'every accepted object settled' }).catch(() => undefined);
  for (const entry of accepted) {
    const want = (entry.expect as { accept: 'converges' | { reason: string } }).accept;
    const wantText = want === 'converges' ? 'converges' : want.reason;
    if (outcomes.get(entry.id) !== wantText) problems.push(`${entry.id} (${entry.what}): ${outcomes.get(entry.id)}, want ${wantText}`);
  }
  const pruned = await env.client.get(MicroserviceKind, { namespace: env.ns, name: 'ms-unknown-pruned' }).catch(() => undefined);
  if (pruned && 'replicas' in (pruned.spec as object)) problems.push('ms-unknown-pruned: unknown field was stored');
  const settleMs = Date.now() - settledAt;

  // Not stalled: the good objects still follow their spec.
  await churn.updateMicroservice('good');
  await churn.updateProvider('good-dhp');
  const after = await waitConverged(env.client, env.ns, env.sim, {
    microservices: new Map([['good', churn.expect.microservices.get('good')!]]),
    providers: new Map([['good-dhp', churn.expect.providers.get('good-dhp')!]]),
    only: ['good', 'good-dhp'],
    timeoutMs: 60_000,
  });
  const errorLines = operator.lines.filter((l) => typeof l.level === 'number' && l.level >= 50).length;

  fig.count('corpus entries', corpus.length);
  fig.count('Microservice entries', corpus.filter((e) => e.kind === 'ms').length);
  fig.count('DigitalHumanProvider entries', corpus.filter((e) => e.kind === 'dhp').length);
  fig.count('rejected with a readable message', rejected);
  fig.count('accepted and settled', accepted.length - problems.filter((p) => accepted.some((e) => p.startsWith(e.id))).length);
  fig.count('longest rejection message (characters)', longest);
  fig.ms('accepted objects settled in', settleMs);
  fig.ms('good objects converged after the corpus', after.converged ? after.tookMs : -1);
  fig.count('operator restarts', operator.child.exitCode === null && operator.child.signalCode === null ? 0 : 1);
  fig.count('operator error log lines', errorLines);
  fig.count('entries not handled as expected', problems.length);

  assert.ok(corpus.length >= 50, `corpus of ${corpus.length}`);
  assert.deepEqual(problems, []);
  assert.ok(after.converged, `the good objects stalled: ${describe(after)}`);
  assert.equal(operator.child.exitCode, null, 'the operator never crashed');
  operator.kill('SIGTERM');
  assert.equal(await operator.exited, 0);
});
