import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { auditLogSize, countBy, matchesAuditFilter, readAuditLog, type AuditEvent } from './audit-log.ts';

function event(over: Partial<AuditEvent>): AuditEvent {
  return {
    auditID: 'x',
    stage: 'ResponseComplete',
    verb: 'get',
    requestURI: '/',
    user: { username: 'admin' },
    userAgent: 'kubectl/v1.32.4 (linux/amd64)',
    requestReceivedTimestamp: '2026-01-01T00:00:00.000000Z',
    stageTimestamp: '2026-01-01T00:00:00.000000Z',
    ...over,
  };
}

test('filters default to ResponseComplete and match user-agent prefixes', () => {
  const e = event({ verb: 'patch', objectRef: { resource: 'deployments', apiGroup: 'apps', namespace: 'a' } });
  assert.equal(matchesAuditFilter(e, {}), true);
  assert.equal(matchesAuditFilter({ ...e, stage: 'ResponseStarted' }, {}), false);
  assert.equal(matchesAuditFilter({ ...e, stage: 'ResponseStarted' }, { stage: null }), true);
  assert.equal(matchesAuditFilter(e, { userAgent: 'kubectl/' }), true);
  assert.equal(matchesAuditFilter(e, { userAgent: 'converge' }), false);
  assert.equal(matchesAuditFilter(e, { userAgent: /linux/ }), true);
  assert.equal(matchesAuditFilter(e, { writesOnly: true, resource: 'deployments', apiGroup: 'apps' }), true);
  assert.equal(matchesAuditFilter(e, { subresource: null }), true);
  assert.equal(matchesAuditFilter(e, { subresource: 'status' }), false);
  assert.equal(matchesAuditFilter(event({ verb: 'list' }), { writesOnly: true }), false);
  assert.equal(matchesAuditFilter(e, { since: new Date('2026-01-01T00:00:01Z') }), false);
});

test('reads from an offset and skips a partial last line', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'audit-test-'));
  try {
    const path = join(dir, 'audit.log');
    writeFileSync(path, `${JSON.stringify(event({ verb: 'create' }))}\n`);
    const offset = await auditLogSize(path);
    appendFileSync(path, `${JSON.stringify(event({ verb: 'update' }))}\n{"kind":"Eve`);
    assert.deepEqual((await readAuditLog(path)).map((e) => e.verb), ['create', 'update']);
    assert.deepEqual((await readAuditLog(path, { fromOffset: offset })).map((e) => e.verb), ['update']);
    const counts = countBy(await readAuditLog(path), (e) => e.verb);
    assert.equal(counts.get('create'), 1);
    assert.equal(await auditLogSize(join(dir, 'missing.log')), 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
