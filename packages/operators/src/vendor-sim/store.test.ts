import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InstanceStore } from './store.ts';

describe('InstanceStore', () => {
  it('creates once per idempotency key, replays while the instance lives, and frees the key on delete', () => {
    const store = new InstanceStore();
    const first = store.create({ region: 'eu', displayName: 'a' }, 'k');
    assert.equal(first.kind, 'created');
    assert.match(first.instance.id, /^inst-[0-9a-f]{16}$/);
    const again = store.create({ region: 'eu', displayName: 'b' }, 'k');
    assert.equal(again.kind, 'replayed');
    assert.equal(again.instance.id, first.instance.id);
    assert.equal(again.instance.displayName, 'a', 'a replay never changes the instance');
    assert.equal(store.create({ region: 'us', displayName: 'a' }, 'k').kind, 'key-conflict');
    assert.equal(store.create({ region: 'eu', displayName: 'a' }, undefined).kind, 'created');
    assert.equal(store.size, 2);
    assert.equal(store.delete(first.instance.id), true);
    assert.equal(store.delete(first.instance.id), false);
    assert.equal(store.findByKey('k'), undefined);
    const fresh = store.create({ region: 'eu', displayName: 'a' }, 'k');
    assert.equal(fresh.kind, 'created');
    assert.notEqual(fresh.instance.id, first.instance.id);
  });

  it('persists every change and reloads it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vendor-sim-store-'));
    try {
      const file = join(dir, 'state.json');
      const store = new InstanceStore(file);
      const { instance } = store.create({ region: 'eu', displayName: 'a' }, 'k');
      store.update(instance.id, { displayName: 'b' });
      store.setHealth(instance.id, 'down', 'maintenance');
      const gone = store.create({ region: 'eu', displayName: 'x' }, 'k2').instance;
      store.delete(gone.id);
      const reloaded = new InstanceStore(file);
      assert.deepEqual(reloaded.list(), store.list());
      assert.equal(reloaded.findByKey('k')?.displayName, 'b');
      assert.equal(reloaded.get(instance.id)?.health, 'down');
      assert.equal(reloaded.findByKey('k2'), undefined);
      assert.deepEqual(readdirSync(dir), ['state.json'], 'no temporary file is left behind');
      assert.equal(JSON.parse(readFileSync(file, 'utf8')).version, 1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
