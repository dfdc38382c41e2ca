import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Microservice } from '../../operators/microservice/api/index.ts';
import { terminalSafe, terminalText } from './terminal-text.ts';
import { buildStatusDocument, renderStatusText, statusLines } from './status-view.ts';
import { explainMicroservice } from './explain-microservice.ts';
import { renderExplanationText } from './explanation-text.ts';
import type { KubeEvent } from '@converge/runtime';
import { defaultPlatformDefaults } from '../../operators/microservice/index.ts';
import { createStyle } from './style.ts';

// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
/** OSC 52 (write the clipboard), a title change, a line erase, a C1 CSI, a bidi override. */
const HOSTILE = 'ok\u001b]52;c;cm0gLXJmIH4=\u0007\u001b]0;pwned\u0007\u001b[2K\r\u009b31m\u202eevil';

test('terminalText shows every control as text, keeps tabs, newlines and the rest, and is idempotent (fast-check)', () => {
  assert.equal(terminalText(HOSTILE), 'ok\\u001b]52;c;cm0gLXJmIH4=\\u0007\\u001b]0;pwned\\u0007\\u001b[2K\\u000d\\u009b31m\\u202eevil');
  assert.equal(terminalText('plain é 😀\tand\nlines'), 'plain é 😀\tand\nlines');
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (s) => {
    const out = terminalText(s);
    assert.ok(!CONTROLS.test(out), JSON.stringify(out));
    assert.equal(terminalText(out), out);
    if (!CONTROLS.test(s)) assert.equal(out, s);
  }), { numRuns: 2_000 });
  const nested = terminalSafe({ a: ['\u001b[8m', { b: '\u0007' }], n: 3, d: new Date(0), z: null });
  assert.deepEqual(nested, { a: ['\\u001b[8m', { b: '\\u0007' }], n: 3, d: new Date(0), z: null });
});

function hostileMicroservice(): Microservice {
  return {
    apiVersion: 'platform.example.io/v1alpha1',
    kind: 'Microservice',
    metadata: { name: 'todo-api', namespace: 'demo', uid: 'ms-uid', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { container: { image: `ghcr.io/x/y:1${HOSTILE}`, port: 8080 } },
    status: {
      phase: 'Failed',
      reason: 'InvalidSpec',
      message: HOSTILE,
      observedGeneration: 1,
      conditions: [{ type: 'Ready', status: 'False', reason: 'InvalidSpec', message: HOSTILE, observedGeneration: 1, lastTransitionTime: '2026-01-01T00:00:00Z' }],
    },
  } as Microservice;
}

test('status, its headless lines and explain print no control from the cluster (plain and coloured)', () => {
  const now = new Date('2026-01-01T00:10:00Z');
  const ms = hostileMicroservice();
  const doc = buildStatusDocument({ namespace: null, microservices: [ms], providers: [], warnings: [HOSTILE] });
  for (const style of [undefined, createStyle(true)]) {
    const text = renderStatusText(doc, { now, wide: true, ...(style ? { style } : {}) });
    // The coloured style's own SGR sequences are the only escapes left.
    const withoutOwn = text.replace(/\u001b\[[0-9;]*m/g, '');
    assert.ok(!CONTROLS.test(withoutOwn), `status text: ${JSON.stringify(withoutOwn)}`);
    assert.match(withoutOwn, /\\u001b\]52/, 'the sequence is shown, not dropped');
  }
  for (const line of statusLines(doc).values()) assert.ok(!CONTROLS.test(line), `status line: ${JSON.stringify(line)}`);
  const event: KubeEvent = {
    metadata: { name: 'e', namespace: 'demo', creationTimestamp: '2026-01-01T00:00:00Z' },
    eventTime: '2026-01-01T00:00:00Z', reportingController: 'converge.dev/operators', reportingInstance: 'x', action: 'Apply',
    reason: `Created${HOSTILE}`, note: HOSTILE, type: 'Warning', regarding: { kind: 'Microservice', name: 'todo-api', uid: 'ms-uid' },
  };
  const e = explainMicroservice({ defaults: defaultPlatformDefaults, defaultsSource: 'built-in platform defaults', microservice: ms, deployment: undefined, service: undefined, endpointSlices: [], events: [event] });
  for (const style of [undefined, createStyle(true)]) {
    const text = renderExplanationText(e, { now, ...(style ? { style } : {}) }).replace(/\u001b\[[0-9;]*m/g, '');
    assert.ok(!CONTROLS.test(text), `explain text: ${JSON.stringify(text)}`);
  }
});
