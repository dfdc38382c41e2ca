import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildStatusDocument } from '../views/index.ts';
import { renderDevScreen, commandsToTry } from './screen.ts';

const info = { kubeconfigPath: '/repo/.converge/dev/kubeconfig', server: 'https://127.0.0.1:6443', vendorUrl: 'https://127.0.0.1:8443', logFile: '/repo/.converge/dev/operators.log', namespace: 'default', samples: true };

test('the commands to try change the image, drift the Deployment, delete the Service, and explain', () => {
  const lines = commandsToTry(info);
  assert.equal(lines[0], 'export KUBECONFIG=/repo/.converge/dev/kubeconfig');
  assert.ok(lines.some((l) => l.startsWith('kubectl patch ms todo-api --type=merge')));
  assert.ok(lines.some((l) => l.startsWith('kubectl set image deployment/todo-api app=')));
  assert.ok(lines.some((l) => l.startsWith('kubectl delete service todo-api')));
  assert.ok(lines.includes('npx converge explain ms/todo-api'));
  assert.ok(commandsToTry({ ...info, namespace: 'demo' }).includes('npx converge explain ms/todo-api -n demo'));
});

test('the screen shows where things are, the tables, the hints and recent changes', () => {
  const doc = buildStatusDocument({ namespace: null, microservices: [], providers: [] });
  const text = renderDevScreen({ doc, info, changes: ['12:00:01 Microservice default/todo-api: phase=Accepted'], now: new Date(), readyAfterMs: 21_000 });
  assert.match(text, /kubeconfig\s+\/repo\/.converge\/dev\/kubeconfig/);
  assert.match(text, /the samples are Ready \(21s after start\)/);
  assert.match(text, /Microservices: none in any namespace/);
  assert.match(text, /Recent changes:\n {2}12:00:01 Microservice default\/todo-api: phase=Accepted/);
  assert.ok(!text.includes('\u001b['));
});

test('hint and change lines are cut to the terminal width', () => {
  const doc = buildStatusDocument({ namespace: null, microservices: [], providers: [] });
  const text = renderDevScreen({ doc, info, changes: [`12:00:01 ${'x'.repeat(200)}`], now: new Date(), width: 80 });
  const lines = text.split('\n');
  assert.ok(lines.filter((l) => l.startsWith('  kubectl') || l.startsWith('  12:00:01')).every((l) => [...l].length <= 80));
  assert.ok(lines.some((l) => l.startsWith('  12:00:01') && l.endsWith('…')));
});

test('the screen shows the dashboard URL beside the table when it runs', () => {
  const doc = buildStatusDocument({ namespace: null, microservices: [], providers: [] });
  assert.match(renderDevScreen({ doc, info: { ...info, dashboardUrl: 'http://127.0.0.1:7070/' }, changes: [], now: new Date() }), /dashboard\s+http:\/\/127\.0\.0\.1:7070\//);
  assert.doesNotMatch(renderDevScreen({ doc, info, changes: [], now: new Date() }), /dashboard\s+http/);
});

test('the screen shows where the vendor simulator keeps its CA and admin handle, and the fault commands', () => {
  const doc = buildStatusDocument({ namespace: null, microservices: [], providers: [] });
  const sim = { ...info, vendorCaPath: '/tmp/converge-vendor-sim-x/ca.pem', vendorSimHandle: '.converge/dev/vendor-sim.json', vendorSimHandleIsDefault: true };
  const text = renderDevScreen({ doc, info: sim, changes: [], now: new Date() });
  assert.match(text, /^ {2}vendor admin {2}\.converge\/dev\/vendor-sim\.json {3}CA \/tmp\/converge-vendor-sim-x\/ca\.pem$/m);
  assert.match(text, /^ {2}npx converge vendor-sim fault --outage 30s {3}# /m);
  assert.match(text, /^ {2}npx converge vendor-sim fault --health degraded:"GPU hot"/m);
  const elsewhere = commandsToTry({ ...sim, vendorSimHandle: '/tmp/d/vendor-sim.json', vendorSimHandleIsDefault: false });
  assert.ok(elsewhere.some((l) => l.startsWith('npx converge vendor-sim fault --sim /tmp/d/vendor-sim.json --outage 30s')), elsewhere.join('\n'));
});
