/**
 * `converge init` on targets that cannot take a project: a file, a place it may not write. It
 * says so in its own words and leaves nothing behind (no half-written project).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './init.ts';

function io() {
  const out = { stdout: '', stderr: '' };
  return { out, io: { stdout: (s: string) => void (out.stdout += s), stderr: (s: string) => void (out.stderr += s) } };
}

test('a target that is a file is named as one, not ENOTDIR', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-init-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'notes.txt');
  writeFileSync(file, 'x');
  const { out, io: sink } = io();
  assert.equal(await run([file], sink as never), 1);
  assert.equal(out.stderr, `converge init: ${file} is a file, not a directory; choose a new directory\n`);
});

test('a place it cannot write (a path through a file): one line saying so, and nothing left behind', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-init-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'file'), 'x');
  const target = join(dir, 'file', 'project');
  const { out, io: sink } = io();
  assert.equal(await run([target], sink as never), 1);
  assert.match(out.stderr, /^converge init: cannot write .*: .*\(ENOTDIR\); nothing written\n$/);
  assert.deepEqual(readdirSync(dir), ['file'], 'nothing left behind');
});

test('a new project is written whole: into a directory that did not exist, or an empty one', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-init-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const target of [join(dir, 'fresh'), join(dir, 'empty')]) {
    if (target.endsWith('empty')) mkdirSync(target);
    const { out, io: sink } = io();
    assert.equal(await run([target], sink as never), 0, out.stderr);
    assert.ok(existsSync(join(target, 'package.json')));
  }
  assert.deepEqual(readdirSync(dir).sort(), ['empty', 'fresh'], 'no staging directory left');
});

test('an existing empty target (a mount point, the shell\'s working directory with `init .`) is filled in place, not replaced', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-init-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const target = join(dir, 'here');
  mkdirSync(target);
  const inode = statSync(target).ino;
  const { out, io: sink } = io();
  assert.equal(await run([target], sink as never), 0, out.stderr);
  assert.equal(statSync(target).ino, inode, 'the same directory');
  assert.ok(existsSync(join(target, 'package.json')));
  assert.ok(!readdirSync(target).some((e) => e.startsWith('.converge-init-')), 'no stage left');
});
