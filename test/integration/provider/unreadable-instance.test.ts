/**
 * One instance of an account the vendor reports outside its contract (a health status the contract
 * does not have, as a newer vendor API version might send) on the local control plane against the
 * vendor simulator (`unknownHealth` fault). Its provider says so in its status; the account's other
 * providers are still observed through the account watch — one listing per round — rather than
 * every provider falling back to its own vendor calls because one item of the listing was odd.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DigitalHumanProviderKind } from '../../../packages/operators/src/operators/provider/index.ts';
import { sleep } from '../../support/operator-harness.ts';
import { setupProviders, provider, waitFor, isReady, ready } from './support.ts';

/** The reconciles of `name` in the operator's debug log since `from`: whether each read its instance from the account watch. */
function readsOf(logs: string[], from: number, name: string): boolean[] {
  return logs
    .slice(from)
    .map((line) => JSON.parse(line) as { msg?: string; name?: string; fromAccountWatch?: boolean })
    .filter((l) => l.name === name && l.msg === 'vendor instance found by providerID')
    .map((l) => l.fromAccountWatch === true);
}

test('an instance outside the vendor contract: its provider says so; the account\'s others are still read from the account watch', { timeout: 120_000 }, async (t) => {
  const env = await setupProviders(t, { provider: { observeIntervalSeconds: 1 } });
  for (const name of ['odd', 'fine-a', 'fine-b']) await env.client.create(DigitalHumanProviderKind, provider(env.ns, name, env.sim.baseUrl));
  const odd = await waitFor(env.client, env.ns, 'odd', isReady, 'odd Ready');
  for (const name of ['fine-a', 'fine-b']) await waitFor(env.client, env.ns, name, isReady, `${name} Ready`);

  env.sim.setFaults({ unknownHealth: { status: 'maintenance', ids: [odd.status!.providerID!] } });
  const told = await waitFor(env.client, env.ns, 'odd', (d) => ready(d)?.status !== 'True', 'odd no longer Ready', 15_000);
  assert.equal(ready(told)?.reason, 'EnsureFailed');
  assert.match(ready(told)?.message ?? '', /unknown health status/);

  // Some rounds later: the others' periodic checks (every second here) are served by the watch.
  const from = env.logs.length;
  await sleep(4_000);
  for (const name of ['fine-a', 'fine-b']) {
    const reads = readsOf(env.logs, from, name);
    assert.ok(reads.length >= 2, `${name}: ${reads.length} checks in 4 s`);
    assert.ok(reads.every(Boolean), `${name}: every check read from the account watch (${JSON.stringify(reads)})`);
    assert.ok(isReady(await env.client.get(DigitalHumanProviderKind, { namespace: env.ns, name })), `${name} stays Ready`);
  }
  assert.ok(env.logs.some((l) => l.includes('the vendor lists instances outside its contract')), 'the account watch says what it cannot read');

  env.sim.clearFaults();
  await waitFor(env.client, env.ns, 'odd', isReady, 'odd Ready again', 20_000);
});
