/**
 * KeyHolds: a key keeps its account and its wait on an endpoint only while its latest reconcile
 * took them (the real VendorRecovery; the account watches recorded).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@converge/runtime';
import { KeyHolds } from './key-holds.ts';
import { VendorRecovery } from './vendor-recovery.ts';
import type { FleetWatch } from './vendor/index.ts';

test('what a reconcile did not take again is let go when it ends; what it took is kept', () => {
  const users = new Map<string, string>();
  const watches = {
    use: (endpoint: string, token: string, key: string) => (users.set(key, `${endpoint} ${token}`), {} as FleetWatch),
    peek: () => undefined,
    release: (key: string) => void users.delete(key),
  };
  const recovery = new VendorRecovery({ clock: new FakeClock() });
  const holds = new KeyHolds(watches, recovery);

  holds.useAccount('https://v', 't1', 'ns/a');
  holds.blocked('https://v', 'ns/a');
  holds.end('ns/a');
  assert.deepEqual([...users.keys()], ['ns/a']);
  assert.equal(recovery.stats().blocked, 1);

  // The next reconcile uses the account again but gets an answer: it waits for nothing.
  holds.useAccount('https://v', 't1', 'ns/a');
  holds.end('ns/a');
  assert.deepEqual([...users.keys()], ['ns/a']);
  assert.equal(recovery.stats().blocked, 0);

  // One that uses no account (its credentials are missing): it is no user any more.
  holds.end('ns/a');
  assert.deepEqual([...users.keys()], []);

  // Holds of one key are not another's.
  holds.useAccount('https://v', 't1', 'ns/b');
  holds.end('ns/a');
  holds.end('ns/b');
  assert.deepEqual([...users.keys()], ['ns/b']);
});

test('without account watches or recovery, nothing is held and nothing throws', () => {
  const holds = new KeyHolds(undefined, undefined);
  assert.equal(holds.useAccount('https://v', 't', 'ns/a'), undefined);
  holds.blocked('https://v', 'ns/a');
  holds.end('ns/a');
});

test('reading an account\'s watch before the vendor took the token takes no place among its users', () => {
  const users = new Map<string, string>();
  const existing = {} as FleetWatch;
  const watches = {
    use: (endpoint: string, token: string, key: string) => (users.set(key, `${endpoint} ${token}`), existing),
    release: (key: string) => void users.delete(key),
    peek: (endpoint: string, token: string) => (endpoint === 'https://v' && token === 't1' ? existing : undefined),
  };
  const holds = new KeyHolds(watches, undefined);
  assert.equal(holds.peekAccount('https://v', 't1'), existing);
  assert.equal(holds.peekAccount('https://v', 'refused'), undefined);
  holds.end('ns/a'); // the vendor refused the token: the reconcile took nothing
  assert.deepEqual([...users.keys()], []);
});
