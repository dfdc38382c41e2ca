import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Accounts, AccountValidationError } from './accounts.ts';

describe('Accounts', () => {
  it('maps each token to one account; suspends with a default reason and resumes', () => {
    let t = Date.UTC(2025, 0, 1);
    const accounts = new Accounts([{ id: 'default', token: 'tok-a' }, { id: 'b', token: 'tok-b' }], () => t);
    assert.equal(accounts.accountFor('tok-a'), 'default');
    assert.equal(accounts.accountFor('tok-b'), 'b');
    assert.equal(accounts.accountFor('tok-c'), undefined);
    assert.equal(accounts.accountFor(''), undefined);
    t += 1000;
    const suspended = accounts.set('b', { state: 'suspended', message: 'invoice 2024-11 unpaid' })!;
    assert.deepEqual(suspended, { id: 'b', state: 'suspended', reason: 'NonPayment', message: 'invoice 2024-11 unpaid', since: '2025-01-01T00:00:01.000Z' });
    t += 1000;
    assert.equal(accounts.set('b', { state: 'suspended', reason: 'PolicyViolation' })!.since, '2025-01-01T00:00:01.000Z', 'still suspended since the first time');
    assert.ok(accounts.isSuspended('b') && !accounts.isSuspended('default'));
    assert.deepEqual(accounts.set('b', { state: 'active' }), { id: 'b', state: 'active', since: '2025-01-01T00:00:02.000Z' });
    assert.equal(accounts.set('nobody', { state: 'active' }), undefined);
    accounts.set('default', { state: 'suspended' });
    accounts.resumeAll();
    assert.ok(accounts.list().every((a) => a.state === 'active'));
  });

  it('refuses bad input with the field named', () => {
    const accounts = new Accounts([{ id: 'default', token: 't' }]);
    for (const [change, field] of [[{ state: 'gone' }, 'state'], [{ state: 'suspended', reason: 'not camel' }, 'reason'], [{ state: 'suspended', message: 'x'.repeat(1025) }, 'message']] as const) {
      assert.throws(() => accounts.set('default', change), (e: unknown) => e instanceof AccountValidationError && e.field === field);
    }
    assert.throws(() => new Accounts([{ id: 'a', token: 't' }, { id: 'b', token: 't' }]), /reuses another account's token/);
    assert.throws(() => new Accounts([{ id: 'A', token: 't' }]), /lower-case/);
  });
});
