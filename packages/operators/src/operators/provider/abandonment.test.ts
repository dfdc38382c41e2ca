import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readAbandonment, abandonCommand, describeRequester } from './abandonment.ts';
import type { DigitalHumanProvider } from './api/index.ts';

const dhp = (annotations: Record<string, string> | undefined, providerID?: string, managedFields?: unknown[]): DigitalHumanProvider => ({
  metadata: { name: 'studio', namespace: 'team-a', uid: 'uid-1', ...(annotations ? { annotations } : {}), ...(managedFields ? { managedFields } : {}) },
  spec: { endpoint: 'https://vendor.example', region: 'r', credentials: { secretRef: { name: 'creds' } } },
  ...(providerID ? { status: { providerID } } : {}),
});
const annotated = (time: string, manager: string) => ({
  manager,
  operation: 'Update',
  time,
  fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:dhp.example.com/abandon-instance': {} } } },
});

test('no annotation: nothing asked', () => {
  assert.equal(readAbandonment(dhp(undefined, 'inst-1')), undefined);
  assert.equal(readAbandonment(dhp({ other: 'x' }, 'inst-1')), undefined);
});

test('the value must name the recorded instance, else the UID', () => {
  assert.equal(readAbandonment(dhp({ 'dhp.example.com/abandon-instance': 'inst-1' }, 'inst-1'))?.confirmed, true);
  assert.equal(readAbandonment(dhp({ 'dhp.example.com/abandon-instance': ' inst-1 ' }, 'inst-1'))?.confirmed, true);
  const wrong = readAbandonment(dhp({ 'dhp.example.com/abandon-instance': 'inst-2' }, 'inst-1'))!;
  assert.equal(wrong.confirmed, false);
  assert.equal(wrong.expected, 'inst-1');
  assert.equal(readAbandonment(dhp({ 'dhp.example.com/abandon-instance': 'true' }, 'inst-1'))?.confirmed, false);
  assert.equal(readAbandonment(dhp({ 'dhp.example.com/abandon-instance': 'uid-1' }, 'inst-1'))?.confirmed, false, 'the UID does not stand for a recorded instance');
  assert.equal(readAbandonment(dhp({ 'dhp.example.com/abandon-instance': 'uid-1' }))?.confirmed, true, 'no instance recorded: the UID');
  assert.equal(readAbandonment(dhp({ 'dhp.example.com/abandon-instance': '' }))?.confirmed, false);
});

test('who: the abandoned-by text and the newest field manager that set the annotation', () => {
  const a = readAbandonment(dhp({ 'dhp.example.com/abandon-instance': 'inst-1', 'dhp.example.com/abandoned-by': '  alice: vendor closed (OPS-1)  ' }, 'inst-1', [
    { manager: 'converge-digitalhumanprovider', operation: 'Update', time: '2026-01-01T00:00:00Z', fieldsV1: { 'f:metadata': { 'f:finalizers': {} } } },
    annotated('2026-01-02T00:00:00Z', 'kubectl-annotate'),
    annotated('2026-01-01T12:00:00Z', 'old-tool'),
  ]))!;
  assert.equal(a.by, 'alice: vendor closed (OPS-1)');
  assert.deepEqual(a.setBy, { manager: 'kubectl-annotate', operation: 'Update', time: '2026-01-02T00:00:00Z' });
  assert.equal(describeRequester(a), '"alice: vendor closed (OPS-1)", set by kubectl-annotate (Update) at 2026-01-02T00:00:00Z');
  const anonymous = readAbandonment(dhp({ 'dhp.example.com/abandon-instance': 'inst-1' }, 'inst-1'))!;
  assert.equal(describeRequester(anonymous), 'setter unknown (no managedFields entry); no dhp.example.com/abandoned-by given');
  assert.equal(readAbandonment(dhp({ 'dhp.example.com/abandon-instance': 'x', 'dhp.example.com/abandoned-by': 'y'.repeat(300) }))?.by?.length, 256);
});

test('the command shown names the instance, else the UID', () => {
  assert.equal(abandonCommand(dhp(undefined, 'inst-1')), 'kubectl annotate dhp studio -n team-a dhp.example.com/abandon-instance=inst-1 dhp.example.com/abandoned-by="<who and why>"');
  assert.match(abandonCommand(dhp(undefined)), /abandon-instance=uid-1 /);
});
