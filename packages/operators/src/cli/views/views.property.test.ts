/**
 * Adversarial property test (fast-check) of the CLI's pure views: `converge status`
 * (`buildStatusDocument`, `renderStatusText`, `statusLines`), `converge explain`
 * (`explainMicroservice`, `explainProvider`, `renderExplanationText`), and what they stand on
 * (`renderTable`, `formatAge`, `podProblems`).
 *
 * Searched (generators in `cluster-objects.test-support.ts`): Microservices and
 * DigitalHumanProviders the API server can return — schema-valid specs with names up to 63 / 253
 * characters, status pruned to any subset of its fields, no or empty conditions, conditions of
 * unknown types and reasons, observedGeneration absent, behind or ahead, 32 KiB messages, dates
 * from year 1 to 9999 and unparseable ones where nothing checks them, deletionTimestamp, up to 40
 * finalizers — with their Deployment (as the operator renders it, drifted, foreign, unowned, taken
 * over, absent; partial status, counts 0 or 10^6), Service, EndpointSlices (`endpoints: null`),
 * Pods (partial container statuses) and Events (events.k8s.io/v1, and core Events as
 * events.k8s.io serves them). Free text everywhere nothing validates it: ESC/CSI/OSC sequences,
 * C0/C1 controls, `\r`, `\t`, `\n`, U+2028, bidi controls, RTL text, combining marks, emoji,
 * zero-width characters. Clocks before, at and decades after the objects' dates. Tables also
 * directly, with random cells, widths and colours.
 *
 * Invariants checked:
 * - nothing throws; the same input and clock give the same document and the same text; the
 *   inputs are not modified (the views are pure, index.ts);
 * - documents are plain JSON: no `undefined` (a difference's `actual` too: null when the live
 *   child lacks the field), no NaN or Infinity, the documented keys present (null rather than missing);
 *   rows sorted by namespace then name whatever the listing order, the summary counts them
 *   (status-view.ts);
 * - every string in every output is well-formed UTF-16 (no cut through a surrogate pair; this
 *   found `show` in operators/microservice/contains.ts cutting a difference's JSON through one);
 * - text output (plain, and coloured once the style's own SGR codes are removed) has no C0
 *   control but tab and newline, no DEL, no C1 control and no bidi control — including what came
 *   from names, images, messages, reasons, Event notes, owner references and provider IDs
 *   (terminal-text.ts, index.ts);
 * - tables: one line per row, each row's cells start at the header's columns (three spaces
 *   before each), widths counted in code points as table.ts says; no tab inside a table (a tab's
 *   width depends on where it lands, so no count can align it);
 * - `renderTable` equals a reference written from its header (upper-case headers, three-space
 *   gap, last column not padded, `\n` → space, cut at maxWidth code points with `…`, colour
 *   around the text only);
 * - ages (`formatAge`) are kubectl durations or `<unknown>`: never negative, never NaN;
 * - `statusLines`: one line per object (status-view.ts); `verdict`: one line (explanation.ts);
 * - explain text: a line starts at the margin only as the header, the verdict or a section title;
 *   the Why section holds one line per finding (`  <mark> `), a finding's further lines (a message
 *   with line breaks) indented under its text, so none passes for another finding or a section;
 * - `podProblems`: at most MAX_CAUSES causes, each pod message cut to MAX_MESSAGE characters;
 *   Events kept at most MAX_EVENTS, oldest first.
 *
 * Runs: 150 per property by default (about 7 s for the file on 2 cores; 13 s with a second test
 * process busy on both);
 * CONVERGE_RELIABILITY_LONG=1 runs ten times as many. A failure prints fast-check's seed:
 * `CONVERGE_FC_SEED=<seed> npm run test:unit -- packages/operators/src/cli/views/views.property.test.ts`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { buildStatusDocument, renderStatusText, statusLines } from './status-view.ts';
import type { StatusDocument } from './status-view.ts';
import { explainMicroservice } from './explain-microservice.ts';
import { explainProvider } from './explain-provider.ts';
import { renderExplanationText } from './explanation-text.ts';
import { MAX_EVENTS } from './explanation.ts';
import type { Explanation } from './explanation.ts';
import { renderTable, cell } from './table.ts';
import type { CellInput, Column } from './table.ts';
import { formatAge } from './age.ts';
import { createStyle, plainStyle } from './style.ts';
import type { Color } from './style.ts';
import { terminalText } from './terminal-text.ts';
import { podProblems, describePodProblems, MAX_CAUSES, MAX_MESSAGE } from './pod-problems.ts';
import { defaultPlatformDefaults } from '../../operators/microservice/index.ts';
import { dns1035Arb, microserviceArb, microserviceWorldArb, nowArb, providerArb, providerWorldArb, looseDateArb, textArb, podsArb, notJson } from './cluster-objects.test-support.ts';
import type { MicroserviceWorld, ProviderWorld } from './cluster-objects.test-support.ts';

const LONG = process.env.CONVERGE_RELIABILITY_LONG === '1';
const RUNS = LONG ? 1_500 : 150;

// ---------------------------------------------------------------------------------------------
// Checks

// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
/** The SGR codes `createStyle(true)` writes, and nothing else. */
// eslint-disable-next-line no-control-regex
const OWN_SGR = /\u001b\[(?:1|2|22|31|32|33|36|39)m/g;
/** kubectl's HumanDuration, or the placeholder. */
const AGE = /^(?:<unknown>|\d+s|\d+m(?:\d+s)?|\d+h(?:\d+m)?|\d+d(?:\d+h)?|\d+y\d+d)$/;
const bold = createStyle(true);

function assertTerminalSafe(text: string, what: string, coloured: boolean): void {
  const visible = coloured ? text.replace(OWN_SGR, '') : text;
  const bad = CONTROLS.exec(visible);
  assert.equal(bad, null, `${what}: raw control U+${bad?.[0].charCodeAt(0).toString(16).padStart(4, '0')} at ${bad?.index}: ${JSON.stringify(visible.slice(Math.max(0, (bad?.index ?? 0) - 40), (bad?.index ?? 0) + 40))}`);
  assert.ok(visible.isWellFormed(), `${what}: a lone surrogate`);
}


/** A table found in `lines` at `start` (its header line) with `rows` rows: rows stay in the header's columns. */
function assertAligned(lines: readonly string[], start: number, rows: number, what: string): void {
  const header = lines[start]!;
  // Headers are ASCII words with single spaces (`LAST SEEN`); columns are three spaces apart.
  const starts = [...header.matchAll(/\S+(?: \S+)*/g)].map((m) => m.index);
  assert.ok(start + rows < lines.length, `${what}: ${rows} rows expected after the header, the text ends first`);
  for (let r = 1; r <= rows; r++) {
    const row = [...lines[start + r]!];
    assert.ok(!lines[start + r]!.includes('\t'), `${what}: a tab in row ${r}: ${JSON.stringify(lines[start + r])}`);
    for (const s of starts.slice(1)) {
      if (row.length < s) break; // trailing empty cells are trimmed
      assert.equal(row.slice(s - 3, s).join(''), '   ', `${what}: row ${r} is not aligned with the header at column ${s}:\n${header}\n${lines[start + r]}`);
    }
  }
  // The indentation of the header is the table's; the row after the table is not a row of it.
}

function findLine(lines: readonly string[], prefix: RegExp, from = 0): number {
  const i = lines.findIndex((l, n) => n >= from && prefix.test(l));
  assert.ok(i >= 0, `no line matching ${prefix}`);
  return i;
}

const deepFreezeJson = (v: unknown) => JSON.stringify(v);
const trimLines = (text: string) => text.split('\n').map((l) => l.trimEnd()).join('\n');

// ---------------------------------------------------------------------------------------------
// converge status

test('status: document, table and headless lines over odd objects, clocks and text (fast-check)', () => {
  fc.assert(
    fc.property(
      fc.array(microserviceArb, { maxLength: 5 }),
      fc.array(providerArb, { maxLength: 5 }),
      fc.option(dns1035Arb, { nil: null }),
      fc.array(textArb, { maxLength: 2 }),
      nowArb,
      fc.record({ wide: fc.boolean(), showNamespace: fc.option(fc.boolean(), { nil: undefined }), colour: fc.boolean() }),
      (microservices, providers, namespace, warnings, now, o) => {
        const input = { namespace, microservices, providers, warnings };
        const before = deepFreezeJson(input);
        const doc = buildStatusDocument(input);
        assert.equal(deepFreezeJson(input), before, 'the input is not modified');
        assert.equal(JSON.stringify(buildStatusDocument(structuredClone(input))), JSON.stringify(doc), 'same input, same document');
        assert.deepEqual(notJson(doc), [], 'the document is plain JSON');
        // Sorted by namespace, then name: the order the API server lists them in does not matter
        // (names are unique per kind and namespace in one cluster).
        const unique = <T extends { metadata: { namespace?: string; name?: string } }>(xs: readonly T[]) => new Set(xs.map((x) => `${x.metadata.namespace}/${x.metadata.name}`)).size === xs.length;
        if (unique(microservices) && unique(providers)) {
          assert.equal(JSON.stringify(buildStatusDocument({ ...input, microservices: [...microservices].reverse(), providers: [...providers].reverse() })), JSON.stringify(doc), 'the listing order does not matter');
        }
        checkStatusDocument(doc, microservices.length, providers.length);

        const options = { wide: o.wide, now, ...(o.showNamespace !== undefined ? { showNamespace: o.showNamespace } : {}) };
        const text = renderStatusText(doc, options);
        assert.equal(renderStatusText(structuredClone(doc), { ...options, now: new Date(now.getTime()) }), text, 'same document and clock, same text');
        assertTerminalSafe(text, 'status text', false);
        const coloured = renderStatusText(doc, { ...options, style: bold });
        assertTerminalSafe(coloured, 'coloured status text', true);
        assert.equal(trimLines(coloured.replace(OWN_SGR, '')), trimLines(text), 'colours change nothing but colours');

        const lines = text.split('\n');
        const headerRe = /^(NAMESPACE|NAME)   /;
        let at = 0;
        for (const [kind, rows] of [['Microservices', doc.microservices], ['DigitalHumanProviders', doc.providers]] as const) {
          if (rows.length === 0) continue;
          const h = findLine(lines, headerRe, at);
          assert.match(lines[h - 1]!, new RegExp(`^${kind} \\(`), `the ${kind} table follows its title`);
          assertAligned(lines, h, rows.length, `${kind} table`);
          // AGE: find the header's AGE column and read each row's age there.
          const ageAt = lines[h]!.indexOf('   AGE') + 3;
          for (let r = 1; r <= rows.length; r++) {
            const age = [...lines[h + r]!].slice(ageAt).join('').split('   ')[0]!.trim();
            assert.match(age, AGE, `age in ${kind} row ${r}`);
          }
          at = h + rows.length + 1;
        }

        const headless = statusLines(doc);
        assert.equal(headless.size, new Set([...doc.microservices.map((m) => `M ${m.namespace}/${m.name}`), ...doc.providers.map((p) => `P ${p.namespace}/${p.name}`)]).size);
        for (const line of headless.values()) {
          assertTerminalSafe(line, 'status line', false);
          assert.ok(!line.includes('\n'), `statusLines promises one line per object: ${JSON.stringify(line)}`);
        }
      },
    ),
    { numRuns: RUNS },
  );
});

function checkStatusDocument(doc: StatusDocument, ms: number, dhp: number): void {
  assert.equal(doc.microservices.length, ms);
  assert.equal(doc.providers.length, dhp);
  for (const rows of [doc.microservices, doc.providers] as const) {
    for (let i = 1; i < rows.length; i++) {
      const a = rows[i - 1]!;
      const b = rows[i]!;
      assert.ok(a.namespace < b.namespace || (a.namespace === b.namespace && a.name <= b.name), `sorted: ${a.namespace}/${a.name} before ${b.namespace}/${b.name}`);
    }
  }
  assert.deepEqual(doc.summary, {
    microservices: { total: ms, ready: doc.microservices.filter((m) => m.converged).length },
    providers: { total: dhp, ready: doc.providers.filter((p) => p.converged).length },
  });
  const msKeys = ['converged', 'createdAt', 'deleting', 'generation', 'image', 'managedResources', 'message', 'name', 'namespace', 'observedGeneration', 'phase', 'port', 'progressing', 'ready', 'reason', 'replicas', 'stalled', 'uid'];
  for (const m of doc.microservices) {
    assert.deepEqual(Object.keys(m).sort(), msKeys);
    assert.ok(m.reason !== '' && m.message !== '', 'an empty status.reason or message is none: null, never ""');
    if (m.converged) assert.ok(m.ready?.status === 'True' && m.ready.current && m.observedGeneration === m.generation && !m.deleting);
    if (m.replicas) for (const v of Object.values(m.replicas)) assert.equal(typeof v, 'number');
  }
  for (const p of doc.providers) {
    if (p.converged) assert.ok(p.ready?.status === 'True' && p.ready.current && p.providerID !== null && p.finalizer && !p.deleting);
    if (p.usage) {
      assert.deepEqual(Object.keys(p.usage).sort(), ['callsToday', 'dailyQuota', 'observedAt', 'quotaRemaining', 'throttledRequests'], 'usage: the documented keys, null rather than missing');
      for (const [k, v] of Object.entries(p.usage)) assert.ok(v === null || typeof v === (k === 'observedAt' ? 'string' : 'number'), `usage.${k}: ${String(v)}`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// converge explain

function checkExplanation(e: Explanation, what: string): void {
  assert.deepEqual(notJson(e), [], `${what}: the document is plain JSON`);
  for (const c of e.microservice?.children ?? []) for (const d of c.differences) assert.deepEqual(Object.keys(d), ['path', 'expected', 'actual'], `${what}: a difference has its three keys`);
  assert.deepEqual(Object.keys(e.object).sort(), ['apiVersion', 'createdAt', 'deletionTimestamp', 'finalizers', 'generation', 'kind', 'name', 'namespace', 'observedGeneration', 'uid']);
  assert.ok(!e.verdict.includes('\n'), `${what}: the verdict is one line (explanation.ts): ${JSON.stringify(e.verdict.slice(0, 300))}`);
  assert.ok(e.events.length <= MAX_EVENTS);
  const times = e.events.map((ev) => (ev.lastTime ? Date.parse(ev.lastTime) || 0 : 0));
  for (let i = 1; i < times.length; i++) assert.ok(times[i - 1]! <= times[i]!, `${what}: Events oldest first`);
  for (const f of e.findings) assert.ok(['ok', 'info', 'warning', 'error'].includes(f.severity));
  if (e.converged) assert.ok(e.object.deletionTimestamp === null && e.object.observedGeneration === e.object.generation);
  if (e.microservice) assert.ok(e.microservice.reason !== '' && e.microservice.message !== '', `${what}: an empty status.reason or message is none: null, never ""`);
}

function checkExplanationText(e: Explanation, now: Date, what: string): void {
  const text = renderExplanationText(e, { now });
  assert.equal(renderExplanationText(structuredClone(e), { now: new Date(now.getTime()) }), text, `${what}: same document and clock, same text`);
  assertTerminalSafe(text, `${what} text`, false);
  const coloured = renderExplanationText(e, { now, style: bold });
  assertTerminalSafe(coloured, `${what} coloured text`, true);
  assert.equal(trimLines(coloured.replace(OWN_SGR, '')), trimLines(text), `${what}: colours change nothing but colours`);
  const lines = text.split('\n');
  if (e.conditions.length > 0) {
    const h = findLine(lines, /^ {2}TYPE {3}/);
    assertAligned(lines, h, e.conditions.length, `${what} conditions`);
    const sinceAt = lines[h]!.indexOf('   SINCE') + 3;
    for (let r = 1; r <= e.conditions.length; r++) assert.match([...lines[h + r]!].slice(sinceAt).join('').split('   ')[0]!.trim(), AGE, `${what}: condition age`);
  }
  if (e.microservice) assertAligned(lines, findLine(lines, /^ {2}KIND {3}/), e.microservice.children.length, `${what} owned objects`);
  if (e.events.length > 0) {
    const h = findLine(lines, /^ {2}LAST SEEN {3}/);
    assertAligned(lines, h, e.events.length, `${what} events`);
    for (let r = 1; r <= e.events.length; r++) assert.match(lines[h + r]!.trim().split('   ')[0]!, AGE, `${what}: event age`);
  }
  assert.match(lines[0]!, /, age (\S+)$/);
  assert.match(/, age (\S+)$/.exec(lines[0]!)![1]!, AGE);
  // Only the header, the verdict and the section titles start at the margin: a multi-line value
  // continues indented, so none of its lines reads as a section (or, below, as a finding).
  const titles = /^(?:Why|Spec and status|Conditions|Owned objects|Desired vs actual \(.*\)|Events(?: \(oldest first\))?)$/;
  lines.slice(2).forEach((l, i) => assert.ok(l === '' || l.startsWith(' ') || titles.test(l), `${what}: line ${i + 3} starts at the margin: ${JSON.stringify(l.slice(0, 120))}`));
  const why = lines.indexOf('Why');
  const end = lines.indexOf('', why);
  const section = lines.slice(why + 1, end === -1 ? undefined : end);
  const marks = section.filter((l) => /^ {2}[✓·!✗] /.test(l));
  assert.equal(marks.length, e.findings.length, `${what}: one line per finding starts with its mark:\n${section.join('\n').slice(0, 2000)}`);
  for (const l of section) assert.ok(/^ {2}[✓·!✗] /.test(l) || l.startsWith('    '), `${what}: a finding's further line is indented under its text: ${JSON.stringify(l.slice(0, 120))}`);
}

function microserviceFacts(w: MicroserviceWorld) {
  return { ...w, ...(w.pods ? { pods: w.pods } : { pods: undefined }), defaults: defaultPlatformDefaults, defaultsSource: 'built-in platform defaults' };
}

test('explain Microservice: document and text over odd objects, children, pods, Events and clocks (fast-check)', () => {
  fc.assert(
    fc.property(microserviceWorldArb, nowArb, (w: MicroserviceWorld, now) => {
      const facts = microserviceFacts(w);
      const before = deepFreezeJson(w);
      const e = explainMicroservice(facts);
      assert.equal(deepFreezeJson(w), before, 'the facts are not modified');
      assert.equal(JSON.stringify(explainMicroservice(microserviceFacts(structuredClone(w)))), JSON.stringify(e), 'same facts, same explanation');
      checkExplanation(e, 'explain ms');
      assert.equal(e.microservice?.children.length, 2);
      checkExplanationText(e, now, 'explain ms');
    }),
    { numRuns: RUNS },
  );
});

test('explain DigitalHumanProvider: document and text over odd objects, credentials, Events and clocks (fast-check)', () => {
  fc.assert(
    fc.property(providerWorldArb, nowArb, (w: ProviderWorld, now) => {
      const before = deepFreezeJson(w);
      const e = explainProvider(w);
      assert.equal(deepFreezeJson(w), before, 'the facts are not modified');
      assert.equal(JSON.stringify(explainProvider(structuredClone(w))), JSON.stringify(e), 'same facts, same explanation');
      checkExplanation(e, 'explain dhp');
      assert.ok(e.provider);
      checkExplanationText(e, now, 'explain dhp');
    }),
    { numRuns: RUNS },
  );
});

// ---------------------------------------------------------------------------------------------
// The parts

test('podProblems: bounded causes, messages cut to MAX_MESSAGE characters, whole characters only (fast-check)', () => {
  fc.assert(
    fc.property(microserviceArb.chain((ms) => podsArb(ms)), (pods) => {
      const p = podProblems(pods ?? []);
      if (!p) return;
      assert.ok(p.causes.length <= MAX_CAUSES);
      assert.ok(p.notReady <= p.pods);
      for (const c of p.causes) {
        assert.ok(c.isWellFormed(), `a cause cut through a character: ${JSON.stringify(c.slice(-40))}`);
        // The last exit's reason is the cluster's text and may hold ')' itself: match it to the end.
        const message = / — (.*?)(?: \(last exit .*\))?(?: \(\d+ pods\))?$/s.exec(c)?.[1];
        if (message !== undefined) assert.ok([...message].length <= MAX_MESSAGE, `message longer than ${MAX_MESSAGE}: ${[...message].length}`);
      }
      assert.ok(describePodProblems(p).isWellFormed());
    }),
    { numRuns: RUNS },
  );
});

test('formatAge: a kubectl duration or <unknown>, never negative or NaN, whatever the timestamp and clock (fast-check)', () => {
  fc.assert(
    fc.property(fc.option(looseDateArb, { nil: undefined }), nowArb, (t, now) => {
      const age = formatAge(t, now);
      assert.match(age, AGE, `${JSON.stringify(t)} at ${now.toISOString()}`);
      if (t && !Number.isNaN(Date.parse(t)) && Date.parse(t) >= now.getTime()) assert.equal(age, '0s', 'a date in the future reads 0s');
    }),
    { numRuns: RUNS * 10 },
  );
});

/** The reference: table.ts's header comment, written out. */
function referenceTable(columns: readonly Column[], rows: readonly (readonly { text: string }[])[]): string {
  const cp = (s: string) => [...s];
  const norm = (text: string, max: number | undefined) => {
    const t = text.replace(/\s*\n\s*/g, ' ').replace(/\t/g, ' ');
    return max === undefined || max < 1 || cp(t).length <= max ? t : `${cp(t).slice(0, max - 1).join('')}…`;
  };
  const cells = rows.map((r) => columns.map((c, i) => norm(r[i]?.text ?? '', c.maxWidth)));
  const widths = columns.map((c, i) => Math.max(cp(c.header).length, ...cells.map((r) => cp(r[i]!).length)));
  const line = (r: string[]) => r.map((t, i) => (i === r.length - 1 ? t : t + ' '.repeat(widths[i]! - cp(t).length))).join('   ').trimEnd();
  return [line(columns.map((c) => c.header.toUpperCase())), ...cells.map(line)].join('\n');
}

test('renderTable: equals its documented layout, colours around text only, rows aligned, no tab inside (fast-check)', () => {
  const colourArb = fc.option(fc.constantFrom<Color>('green', 'red', 'yellow', 'cyan', 'bold', 'dim'), { nil: undefined });
  fc.assert(
    fc.property(
      fc.array(fc.record({ header: fc.stringMatching(/^[a-z][a-z-]{0,9}$/), maxWidth: fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined }) }, { requiredKeys: ['header'] }), { minLength: 1, maxLength: 5 }),
      fc.array(fc.array(fc.record({ text: textArb.map(terminalText), color: colourArb }), { maxLength: 6 }), { maxLength: 6 }),
      (columns, rows) => {
        const cols: Column[] = columns.map((c) => ({ header: c.header, ...(c.maxWidth !== undefined ? { maxWidth: c.maxWidth } : {}) }));
        const input: CellInput[][] = rows.map((r) => r.map((c) => cell(c.text, c.color)));
        const plain = renderTable(cols, input, plainStyle);
        const coloured = renderTable(cols, input, bold);
        // A coloured last cell keeps its trailing blanks inside the colour (invisible, no column follows).
        assert.equal(trimLines(coloured.replace(OWN_SGR, '')), plain, 'colours change nothing but colours');
        assert.equal(plain.split('\n').length, rows.length + 1, 'one line per row');
        assertAligned(plain.split('\n'), 0, rows.length, 'table');
        assert.equal(plain, referenceTable(cols, rows.map((r) => r.map((c) => ({ text: c.text })))));
        assertTerminalSafe(plain, 'table', false);
      },
    ),
    { numRuns: RUNS * 4 },
  );
});
