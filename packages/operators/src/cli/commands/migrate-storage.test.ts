/**
 * `converge migrate-storage` without an API server (`migrateStorage` stubbed): where its lines go.
 * A failure, stopping early included, is said on stderr like every other command's; the result of
 * a complete migration on stdout.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StorageMigrationResult } from '@converge/runtime';
import { run, type MigrateStorageDeps } from './migrate-storage.ts';

function io() {
  const out = { stdout: '', stderr: '' };
  return { out, io: { stdout: (s: string) => void (out.stdout += s), stderr: (s: string) => void (out.stderr += s), env: {} } };
}

/** A kubeconfig for a server that is never called (the migration is stubbed). */
function kubeconfig(dir: string): string {
  const path = join(dir, 'kubeconfig');
  writeFileSync(path, JSON.stringify({
    apiVersion: 'v1', kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }],
    users: [{ name: 'u', user: { token: 't' } }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  }));
  return path;
}

function stub(complete: boolean): MigrateStorageDeps {
  return {
    signal: () => new AbortController().signal,
    migrate: async (_client, crd): Promise<StorageMigrationResult> => ({
      crd, version: 'v1', seen: 300, rewritten: 300, skipped: 0, resumed: false, complete,
      storedVersionsBefore: ['v1', 'v1alpha1'], storedVersionsAfter: complete ? ['v1'] : ['v1', 'v1alpha1'],
    }),
  };
}

test('stopped early (--max-pages, or interrupted): said on stderr with exit 1, nothing on stdout', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-migrate-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const { out, io: sink } = io();
  assert.equal(await run(['--kind', 'ms', '--max-pages', '3', '--kubeconfig', kubeconfig(dir)], sink, stub(false)), 1);
  assert.equal(out.stdout, '');
  assert.match(out.stderr, /^converge migrate-storage: microservices\.platform\.example\.io: 300 objects read, 300 rewritten in v1, 0 changed or deleted meanwhile; stopped early after \d+\.\d s: run again to resume\n$/);
});

test('a complete migration: its result on stdout, exit 0', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'converge-migrate-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const { out, io: sink } = io();
  assert.equal(await run(['--kind', 'ms', '--kubeconfig', kubeconfig(dir)], sink, stub(true)), 0, out.stderr);
  assert.match(out.stdout, /^microservices\.platform\.example\.io: 300 objects read, .* storedVersions \["v1","v1alpha1"\] → \["v1"\]\n$/);
  assert.equal(out.stderr, '');
});
