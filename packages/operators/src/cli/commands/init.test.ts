/**
 * `converge init` on targets that cannot take a project: a file, a place it may not write. It
 * says so in its own words and leaves nothing behind (no half-written project).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { run, type InitFs } from './init.ts';

function io() {
  const out = { stdout: '', stderr: '' };
  return { out, io: { stdout: (s: string) => void (out.stdout += s), stderr: (s: string) => void (out.stderr += s) } };
}

const realFs: InitFs = { mkdirSync, writeFileSync, renameSync, rmdirSync, rmSync };

/** A file system error as Node throws it: `code`, `path`. */
function fsError(code: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: injected, '${path}'`), { code, path });
}

/** Node's fs, but the `nth` call of `op` fails with `code` (on the path it was given), as a full disk or a lost permission would. */
function failing(op: keyof InitFs, nth: number, code = 'EACCES', fs: InitFs = realFs): InitFs {
  let calls = 0;
  const real = fs[op] as (...args: unknown[]) => unknown;
  return { ...fs, [op]: (...args: unknown[]) => {
    if (++calls === nth) throw fsError(code, String(args[0]));
    return real(...args);
  } };
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

test('a failure after the first entry is moved into an existing directory leaves it as it was, and says what it removed', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-init-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const target = join(dir, 'here');
  mkdirSync(target);
  const { out, io: sink } = io();
  assert.equal(await run([target], sink as never, failing('renameSync', 2)), 1);
  assert.deepEqual(readdirSync(target), [], 'the entry already moved is removed again, and the stage');
  assert.match(out.stderr, /^converge init: cannot write .*\(EACCES\); removed what it had written in .*here, nothing is left\n$/);
  assert.doesNotMatch(out.stderr, /nothing written/);
});

test('what it cannot remove again is named, not covered by "nothing written"', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-init-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const target = join(dir, 'here');
  mkdirSync(target);
  const { out, io: sink } = io();
  // The second move fails; so does removing the first one again (the first rmSync).
  assert.equal(await run([target], sink as never, failing('rmSync', 1, 'EBUSY', failing('renameSync', 2))), 1);
  const left = readdirSync(target).filter((e) => !e.startsWith('.converge-init-'));
  assert.equal(left.length, 1, 'the entry it could not remove');
  assert.match(out.stderr, new RegExp(`; could not remove what it had written: ${join(target, left[0]!).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(remove it by hand\\)\n$`));
  assert.doesNotMatch(out.stderr, /nothing written/);
});

test('`init a/b/c` that fails removes the parents it created (a/b), not only its stage', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-init-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const a = join(dir, 'a');
  mkdirSync(a);
  for (const fs of [failing('writeFileSync', 1, 'ENOSPC'), failing('renameSync', 1)]) {
    const { out, io: sink } = io();
    assert.equal(await run([join(a, 'b', 'c')], sink as never, fs), 1);
    assert.deepEqual(readdirSync(a), [], `no a/b left: ${out.stderr}`);
    assert.match(out.stderr, /; removed what it had written in .*a\/b, nothing is left\n$/);
  }
});

test('`init a/b/c` with a read-only `a`: no a/b, and truly nothing written', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-init-'));
  t.after(() => {
    chmodSync(join(dir, 'a'), 0o755);
    rmSync(dir, { recursive: true, force: true });
  });
  const a = join(dir, 'a');
  mkdirSync(a);
  chmodSync(a, 0o555);
  // Root ignores the mode: a directory made inside `a` fails as it would for anyone else.
  const readOnlyA: InitFs = {
    ...realFs,
    mkdirSync: ((path: string, options?: { recursive?: boolean }) => {
      let first = path;
      while (!existsSync(dirname(first))) first = dirname(first);
      if (dirname(first) === a) throw fsError('EACCES', first);
      return mkdirSync(path, options);
    }) as InitFs['mkdirSync'],
  };
  const { out, io: sink } = io();
  assert.equal(await run([join(a, 'b', 'c')], sink as never, readOnlyA), 1);
  assert.deepEqual(readdirSync(a), []);
  assert.equal(out.stderr, `converge init: cannot write ${join(a, 'b')}: permission denied (EACCES); nothing written\n`);
});
