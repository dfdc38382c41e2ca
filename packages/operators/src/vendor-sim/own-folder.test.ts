/**
 * The simulator's own folder holds private keys: one left by a SIGKILLed simulator is swept by a
 * later start; one whose owner lives, or that is not the simulator's, is kept.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeOwnFolder, sweepAbandonedFolders } from './own-folder.ts';
import { startVendorSimulator } from './index.ts';

test('folders of simulators that are gone are swept; live owners, recent unowned folders and other folders are kept', async (t) => {
  const base = mkdtempSync(join(tmpdir(), 'converge-own-folder-'));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
  const folder = (name: string, owner?: string) => {
    const dir = join(base, name);
    mkdirSync(dir);
    writeFileSync(join(dir, 'ca-key.pem'), 'secret');
    if (owner !== undefined) writeFileSync(join(dir, 'owner.pid'), owner);
    return dir;
  };
  const gone = folder('converge-vendor-sim-gone', dead);
  const live = folder('converge-vendor-sim-live', String(process.ppid));
  const unownedOld = folder('converge-vendor-sim-unowned-old');
  utimesSync(unownedOld, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
  const unownedNew = folder('converge-vendor-sim-unowned-new');
  const other = folder('someone-else', dead);
  const swept = await sweepAbandonedFolders(base);
  assert.deepEqual(swept.sort(), [gone, unownedOld].sort());
  for (const kept of [live, unownedNew, other]) assert.ok(existsSync(kept), kept);
  const mine = await makeOwnFolder(base);
  assert.equal(readFileSync(join(mine, 'owner.pid'), 'utf8'), String(process.pid));
  assert.deepEqual(await sweepAbandonedFolders(base), [], 'this process\'s own folder is never swept');
});

test('a simulator given no folder makes its own, and removes it at stop', async () => {
  const sim = await startVendorSimulator({ token: 't' });
  const dir = join(sim.caPath, '..');
  assert.equal(readFileSync(join(dir, 'owner.pid'), 'utf8'), String(process.pid));
  await sim.stop();
  assert.equal(existsSync(dir), false);
});
