/**
 * What the next start sweeps from the temp folder: state folders of launchers that are gone, and
 * folders without an owner file once they are a minute old (a certificate writer that outlived
 * its launcher wrote one again after its removal, CA key and admin token included; nothing ever
 * removed it). A live launcher's folder, and one being made this instant, stay.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sweepStaleStateDirs } from './launcher.ts';

function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

test('the sweep removes the folders of gone launchers and ownerless folders older than a minute, and nothing else', (t) => {
  const base = mkdtempSync(join(tmpdir(), 'converge-sweep-'));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const now = Date.now();
  const folder = (name: string, owner: number | undefined, ageMs: number): string => {
    const dir = join(base, name);
    mkdirSync(join(dir, 'pki'), { recursive: true });
    writeFileSync(join(dir, 'pki', 'ca.key'), 'key');
    if (owner !== undefined) writeFileSync(join(dir, 'owner.pid'), String(owner));
    const at = (now - ageMs) / 1000;
    utimesSync(dir, at, at);
    return dir;
  };
  const goneOwner = folder('converge-cp-gone', deadPid(), 0);
  const liveOwner = folder('converge-cp-live', process.pid, 3_600_000);
  const ownerlessOld = folder('converge-cp-orphan', undefined, 61_000);
  const ownerlessNew = folder('converge-cp-making', undefined, 1_000);
  const notOurs = folder('other-folder', undefined, 3_600_000);

  sweepStaleStateDirs(base, now);

  assert.equal(existsSync(goneOwner), false, 'the folder of a launcher that is gone is swept');
  assert.equal(existsSync(ownerlessOld), false, 'an ownerless folder older than a minute is swept');
  assert.equal(existsSync(liveOwner), true, "a live launcher's folder stays, however old");
  assert.equal(existsSync(ownerlessNew), true, 'an ownerless folder of a second ago may be one being made: it stays');
  assert.equal(existsSync(notOurs), true, 'only converge-cp- folders are looked at');
});

test('the sweep of a missing or unreadable base folder does nothing and does not throw', () => {
  assert.doesNotThrow(() => sweepStaleStateDirs(join(tmpdir(), 'converge-sweep-no-such-folder'), Date.now()));
});
