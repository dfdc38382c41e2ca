/**
 * Model-based property test of `ConvergenceTracker` (the data behind the
 * `converge_longest_unconverged_seconds` gauge and `/debug/unconverged`).
 *
 * Searched: random sequences, on a `FakeClock`, of
 * - objects observed (added or updated) under four keys (three namespaced, one cluster-scoped),
 *   judged by the DEFAULT predicate: random `metadata.generation` / `status.observedGeneration`,
 *   a `Ready` condition that is absent or True/False/Unknown, with its own observedGeneration or
 *   not, and a lastTransitionTime that is absent, in the past, in the future, a fixed date
 *   (1970, 2000, the smallest and largest dates JS knows) or an invalid string; plus odd shapes
 *   (no status, `status: null`, `conditions` not an array, a `null` in `conditions`);
 * - objects observed under a CUSTOM predicate: converged, unconverged with `sinceMs` absent,
 *   past, future, fractional, negative, -0, ±huge, ±Infinity or NaN, or throwing an Error, a
 *   string, `undefined`, a symbol, a null-prototype object or an object whose toString throws;
 * - deletions (`forget`, also of keys never seen);
 * - clock moves: `advance` (0 ms to days) and wall-clock steps `stepWall`, forwards and backwards
 *   (the operator's clock corrected by NTP, a VM resumed);
 * - queries: `top(n)` with n in {0, 1, 2, 3, 10, -1, 2.5, NaN, Infinity}, `oldestAgeSeconds()`,
 *   `size`, each also with an explicit `now` argument.
 * A plain model keeps, per key, the observations made since the object last became unconverged
 * (dropped when it converges or is forgotten).
 *
 * Checked after every step (and by the return value of every `observe`):
 * - an object is listed iff the predicate's last verdict on it was "unconverged" and it was not
 *   forgotten since; `size` and the length of `top(Infinity)` equal that count (a converged or
 *   forgotten object leaves no trace: no unbounded memory);
 * - every entry's age is the model's, its reason (and message) the LAST verdict's; `sinceMs` is
 *   finite and never after `clock.now()`; `ageSeconds` is finite, never negative, and equals
 *   `(now() - sinceMs) / 1000`;
 * - "since" stays put while the object stays unconverged (as an instant: `sinceMs` itself moves
 *   only by the size of a wall step): unchanged by `advance`, by queries, by other objects, by a
 *   changed reason; it can only move earlier, when an observation claims an earlier time (a
 *   lastTransitionTime / `sinceMs` before what the tracker had);
 * - `top(n)` is the first n of the full list, oldest first, ties by key; `oldestAgeSeconds()` is
 *   the first entry's age, 0 when nothing is unconverged; queries do not change anything and
 *   never throw; `observe` and `forget` never throw.
 *
 * Choices made where the doc comments are silent (the clock module's rule "measure every
 * duration, deadline and age on monotonic()" decides the first):
 * - Ages run on MONOTONIC time. A wall-clock step does not change any age (a +1 h NTP step must
 *   not page anyone, a -1 h step must not reset the gauge to 0). The wall clock is read only to
 *   turn a time claimed by the object (lastTransitionTime, a predicate's `sinceMs`, both wall
 *   times) into an age, at the moment it is observed. `sinceMs` is reported as
 *   `now() - age`: after a wall step it shows the same instant on the new wall clock (so it
 *   shifts by the step), always consistent with `ageSeconds` and never in the future.
 * - "since" is the earliest of: first sight of this unconverged stretch, and every time claimed
 *   during it (a claim in the future counts as "now"; a non-finite claim — NaN, ±Infinity,
 *   an unparseable lastTransitionTime — is ignored; a finite negative one, before 1970, is a
 *   past time like any other). Reason and message are the latest observation's.
 * - An object that converges or is forgotten and comes back starts afresh.
 * - `top(n)`: n is truncated toward zero; 0, negative and NaN give `[]`, Infinity gives all.
 * - An explicit `now` argument is a wall-clock reading to evaluate ages at:
 *   age = max(0, now - sinceMs). Only finite `now` arguments are generated.
 * - A predicate that throws anything, even a value `String()` cannot print, counts the object as
 *   unconverged with reason `PredicateError` (the message is not checked for unprintable values).
 * - For the odd shapes, only "unconverged" is required, not which reason.
 *
 * Runs: 2 500 sequences of 1 to 60 steps (about 1 s); CONVERGE_RELIABILITY_LONG=1 runs 25 000 (about 10 s).
 * CONVERGE_MODEL_OPS=observe,script,… narrows the kinds of steps generated.
 * A failure prints fast-check's seed: replay with CONVERGE_FC_SEED=<seed>.
 */
import { describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FakeClock } from '../clock/index.ts';
import type { Condition, KubeObject } from '../objects/index.ts';
import { ConvergenceTracker, defaultConvergencePredicate } from './index.ts';
import type { ConvergencePredicate, Unconverged, UnconvergedEntry } from './index.ts';

const LONG = process.env.CONVERGE_RELIABILITY_LONG === '1';
const RUNS = LONG ? 25_000 : 2_500;

const KEYS: { namespace?: string; name: string; key: string }[] = [
  { namespace: 'ns', name: 'a', key: 'ns/a' },
  { namespace: 'ns', name: 'b', key: 'ns/b' },
  { namespace: 'other', name: 'a', key: 'other/a' },
  { name: 'c', key: 'c' },
];
const UNKNOWN_KEY = 'ns/never-seen';

// ---------------------------------------------------------------------------------------------
// What is generated

/** A lastTransitionTime: relative to the clock's `now()` when observed, a known date, garbage. */
type Ltt = { t: 'rel'; deltaMs: number } | { t: 'fixed'; text: string; ms: number } | { t: 'invalid'; text: string } | { t: 'absent' };

interface ReadySpec {
  status: Condition['status'];
  reason: string;
  message: string;
  ltt: Ltt;
  observedGeneration: number | undefined;
}

type Shape = 'normal' | 'noStatus' | 'statusNull' | 'conditionsNotArray' | 'nullBeforeReady';

interface ObjSpec {
  generation: number | undefined;
  observedGeneration: number | undefined;
  ready: ReadySpec | undefined;
  /** Another condition (type Available) listed before Ready. */
  otherFirst: boolean;
  shape: Shape;
}

type SinceSpec = { t: 'absent' } | { t: 'rel'; deltaMs: number } | { t: 'abs'; value: number };
type ThrowKind = 'error' | 'string' | 'undefined' | 'symbol' | 'nullProto' | 'badToString';
type Script =
  | { t: 'converged' }
  | { t: 'unconverged'; reason: string; message: string | undefined; since: SinceSpec }
  | { t: 'throw'; what: ThrowKind };

type Op =
  | { t: 'observe'; key: number; spec: ObjSpec }
  | { t: 'script'; key: number; script: Script }
  | { t: 'forget'; key: number }
  | { t: 'forgetUnknown' }
  | { t: 'advance'; ms: number }
  | { t: 'stepWall'; ms: number }
  | { t: 'top'; n: number; nowDelta: number | undefined }
  | { t: 'oldest'; nowDelta: number | undefined };

const keyIndex = fc.nat(KEYS.length - 1);
const delta = fc.oneof(fc.integer({ min: -5_000, max: 5_000 }), fc.integer({ min: -10_000_000_000, max: 10_000_000_000 }));
const FIXED: { text: string; ms: number }[] = [
  { text: '1970-01-01T00:00:00Z', ms: 0 },
  { text: '1969-12-31T23:59:59Z', ms: -1_000 },
  { text: '2000-01-01T00:00:00.000Z', ms: 946_684_800_000 },
  { text: '2099-12-31T23:59:59.999Z', ms: 4_102_444_799_999 },
  { text: '-271821-04-20T00:00:00.000Z', ms: -8.64e15 },
  { text: '+275760-09-13T00:00:00.000Z', ms: 8.64e15 },
];
const INVALID = ['', 'yesterday', '2026-13-45T00:00:00Z', 'NaN', 'Infinity', '+275760-09-13T00:00:00.001Z'];

const lttArb: fc.Arbitrary<Ltt> = fc.oneof(
  { weight: 4, arbitrary: delta.map((deltaMs): Ltt => ({ t: 'rel', deltaMs })) },
  { weight: 2, arbitrary: fc.constantFrom(...FIXED).map((f): Ltt => ({ t: 'fixed', ...f })) },
  { weight: 1, arbitrary: fc.constantFrom(...INVALID).map((text): Ltt => ({ t: 'invalid', text })) },
  { weight: 1, arbitrary: fc.constant<Ltt>({ t: 'absent' }) },
);
const gen = fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined });
const readyArb: fc.Arbitrary<ReadySpec> = fc.record({
  status: fc.constantFrom<Condition['status']>('True', 'False', 'Unknown'),
  reason: fc.constantFrom('', 'Waiting', 'VendorDown'),
  message: fc.constantFrom('', 'vendor API 503'),
  ltt: lttArb,
  observedGeneration: gen,
});
const objSpecArb: fc.Arbitrary<ObjSpec> = fc.record({
  generation: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
  observedGeneration: gen,
  ready: fc.option(readyArb, { nil: undefined, freq: 4 }),
  otherFirst: fc.boolean(),
  shape: fc.oneof(
    { weight: 12, arbitrary: fc.constant<Shape>('normal') },
    { weight: 1, arbitrary: fc.constantFrom<Shape>('noStatus', 'statusNull', 'conditionsNotArray', 'nullBeforeReady') },
  ),
});
const SINCE_ABS = [Number.NaN, Infinity, -Infinity, -1, -0, 0, 0.25, -1e300, -Number.MAX_VALUE, 1e300, Number.MAX_VALUE, -8.64e15];
const sinceArb: fc.Arbitrary<SinceSpec> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<SinceSpec>({ t: 'absent' }) },
  { weight: 4, arbitrary: fc.tuple(delta, fc.constantFrom(0, 0.25, 0.5)).map(([d, f]): SinceSpec => ({ t: 'rel', deltaMs: d + f })) },
  { weight: 3, arbitrary: fc.constantFrom(...SINCE_ABS).map((value): SinceSpec => ({ t: 'abs', value })) },
);
const scriptArb: fc.Arbitrary<Script> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<Script>({ t: 'converged' }) },
  {
    weight: 6,
    arbitrary: fc.record({
      t: fc.constant('unconverged' as const),
      reason: fc.constantFrom('NotDone', 'Degraded'),
      message: fc.option(fc.constantFrom('', 'waiting for the vendor'), { nil: undefined }),
      since: sinceArb,
    }),
  },
  { weight: 1, arbitrary: fc.constantFrom<ThrowKind>('error', 'string', 'undefined', 'symbol', 'nullProto', 'badToString').map((what): Script => ({ t: 'throw', what })) },
);
const nowDelta = fc.option(fc.oneof(fc.constant(0), delta), { nil: undefined, freq: 2 });
/** CONVERGE_MODEL_OPS=observe,script,advance,… narrows the steps generated (to study one kind of defect). */
const ONLY = process.env.CONVERGE_MODEL_OPS?.split(',');
const weighted: { t: Op['t']; weight: number; arbitrary: fc.Arbitrary<Op> }[] = [
  { t: 'observe', weight: 8, arbitrary: fc.record({ t: fc.constant('observe' as const), key: keyIndex, spec: objSpecArb }) },
  { t: 'script', weight: 6, arbitrary: fc.record({ t: fc.constant('script' as const), key: keyIndex, script: scriptArb }) },
  { t: 'forget', weight: 2, arbitrary: fc.record({ t: fc.constant('forget' as const), key: keyIndex }) },
  { t: 'forgetUnknown', weight: 1, arbitrary: fc.constant<Op>({ t: 'forgetUnknown' }) },
  {
    t: 'advance',
    weight: 5,
    arbitrary: fc
      .oneof(fc.constant(0), fc.integer({ min: 1, max: 5_000 }), fc.integer({ min: 1, max: 1_000_000_000 }))
      .map((ms): Op => ({ t: 'advance', ms })),
  },
  { t: 'stepWall', weight: 3, arbitrary: delta.map((ms): Op => ({ t: 'stepWall', ms })) },
  {
    t: 'top',
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('top' as const), n: fc.constantFrom(0, 1, 2, 3, 10, -1, 2.5, Number.NaN, Infinity), nowDelta }),
  },
  { t: 'oldest', weight: 1, arbitrary: fc.record({ t: fc.constant('oldest' as const), nowDelta }) },
];
const opArb: fc.Arbitrary<Op> = fc.oneof(...weighted.filter((w) => !ONLY || ONLY.includes(w.t)));

// ---------------------------------------------------------------------------------------------
// Building objects and predicate outcomes

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function lttText(ltt: Ltt, now: number): string | undefined {
  switch (ltt.t) {
    case 'rel':
      return iso(now + ltt.deltaMs);
    case 'fixed':
    case 'invalid':
      return ltt.text;
    case 'absent':
      return undefined;
  }
}

/** The wall time a lastTransitionTime claims, when it is a valid date. */
function lttMs(ltt: Ltt, now: number): number | undefined {
  switch (ltt.t) {
    case 'rel':
      return now + ltt.deltaMs;
    case 'fixed':
      return ltt.ms;
    case 'invalid':
    case 'absent':
      return undefined;
  }
}

function buildObject(k: number, spec: ObjSpec, now: number): KubeObject {
  const { namespace, name } = KEYS[k] as (typeof KEYS)[number];
  const conditions: unknown[] = [];
  if (spec.otherFirst) conditions.push({ type: 'Available', status: 'True', reason: 'Up', message: '', lastTransitionTime: iso(now) });
  if (spec.shape === 'nullBeforeReady') conditions.push(null);
  if (spec.ready) {
    const r = spec.ready;
    const text = lttText(r.ltt, now);
    conditions.push({
      type: 'Ready',
      status: r.status,
      reason: r.reason,
      message: r.message,
      ...(text === undefined ? {} : { lastTransitionTime: text }),
      ...(r.observedGeneration === undefined ? {} : { observedGeneration: r.observedGeneration }),
    });
  }
  const og = spec.observedGeneration === undefined ? {} : { observedGeneration: spec.observedGeneration };
  let status: unknown;
  switch (spec.shape) {
    case 'noStatus':
      status = undefined;
      break;
    case 'statusNull':
      status = null;
      break;
    case 'conditionsNotArray':
      status = { ...og, conditions: { Ready: 'True' } };
      break;
    default:
      status = { ...og, conditions };
  }
  const obj: KubeObject & { status?: unknown } = {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { ...(namespace === undefined ? {} : { namespace }), name, ...(spec.generation === undefined ? {} : { generation: spec.generation }) },
  };
  if (spec.shape !== 'noStatus') obj.status = status;
  return obj;
}

/** What the model expects of one observation: converged, or unconverged with a reason (undefined: any) and maybe a claimed wall time. */
type Expect = { converged: true } | { converged: false; reason: string | undefined; message?: string | undefined; checkMessage: boolean; claim: number | undefined };

/** The documented default predicate, restated on the spec (not on the built object). */
function expectDefault(spec: ObjSpec, now: number): Expect {
  const unconv = (reason: string | undefined, claim?: number): Expect => ({ converged: false, reason, checkMessage: false, claim });
  const hasStatus = spec.shape !== 'noStatus' && spec.shape !== 'statusNull';
  const observed = hasStatus ? spec.observedGeneration : undefined;
  if (spec.generation !== undefined) {
    if (observed === undefined) return unconv('NotObserved');
    if (observed < spec.generation) return unconv('GenerationLag');
  }
  if (!hasStatus) return unconv('ReadyMissing');
  // Odd shapes: unconverged, whichever reason.
  if (spec.shape === 'conditionsNotArray' || spec.shape === 'nullBeforeReady') return unconv(undefined);
  const r = spec.ready;
  if (!r) return unconv('ReadyMissing');
  if (r.status !== 'True') return unconv(r.reason || 'NotReady', lttMs(r.ltt, now));
  if (spec.generation !== undefined && r.observedGeneration !== undefined && r.observedGeneration < spec.generation) return unconv('ReadyStale');
  return { converged: true };
}

class PrintlessThrow {
  toString(): string {
    throw new Error('this thrown value cannot be printed');
  }
}

/** A scripted predicate outcome made concrete at the moment of the observation. */
type Concrete = { t: 'return'; verdict: Unconverged | undefined } | { t: 'throw'; value: unknown };

function concretize(script: Script, now: number): { concrete: Concrete; expect: Expect } {
  switch (script.t) {
    case 'converged':
      return { concrete: { t: 'return', verdict: undefined }, expect: { converged: true } };
    case 'unconverged': {
      const s = script.since;
      const sinceMs = s.t === 'absent' ? undefined : s.t === 'rel' ? now + s.deltaMs : s.value;
      const verdict: Unconverged = { reason: script.reason, ...(script.message === undefined ? {} : { message: script.message }), ...(sinceMs === undefined ? {} : { sinceMs }) };
      const claim = sinceMs !== undefined && Number.isFinite(sinceMs) ? sinceMs : undefined;
      return { concrete: { t: 'return', verdict }, expect: { converged: false, reason: script.reason, message: script.message, checkMessage: true, claim } };
    }
    case 'throw': {
      const thrown: Record<ThrowKind, { value: unknown; message: string | undefined }> = {
        error: { value: new Error('predicate bug'), message: 'predicate bug' },
        string: { value: 'plain string', message: 'plain string' },
        undefined: { value: undefined, message: 'undefined' },
        symbol: { value: Symbol('odd'), message: 'Symbol(odd)' },
        nullProto: { value: Object.create(null) as object, message: undefined },
        badToString: { value: new PrintlessThrow(), message: undefined },
      };
      const { value, message } = thrown[script.what];
      return {
        concrete: { t: 'throw', value },
        expect: { converged: false, reason: 'PredicateError', message, checkMessage: message !== undefined, claim: undefined },
      };
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The model

interface Observation {
  /** clock.monotonic() and clock.now() at the observation. */
  mono: number;
  now: number;
  claim: number | undefined;
}
interface ModelEntry {
  history: Observation[];
  last: Expect & { converged: false };
}

class Model {
  readonly entries = new Map<string, ModelEntry>();

  observe(key: string, expect: Expect, mono: number, now: number): void {
    if (expect.converged) {
      this.entries.delete(key);
      return;
    }
    const prev = this.entries.get(key);
    const history = prev ? prev.history : [];
    history.push({ mono, now, claim: expect.claim });
    this.entries.set(key, { history, last: expect });
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  /**
   * Monotonic instant since when the object has been unconverged: the earliest of the instants
   * vouched for during this stretch (first sight; a claimed wall time, as an age at that moment).
   */
  anchor(key: string): number {
    const e = this.entries.get(key);
    assert.ok(e, `model has no ${key}`);
    let best = Infinity;
    for (const o of e.history) {
      const claimedAge = o.claim === undefined ? 0 : Math.max(0, o.now - o.claim);
      best = Math.min(best, o.mono - claimedAge);
    }
    return best;
  }
}

// ---------------------------------------------------------------------------------------------
// Checks

/** Equal up to rounding; `scale` is the magnitude of the terms the values were computed from. */
function close(actual: number, expected: number, what: string, scale = 0): void {
  const tol = 16 * Number.EPSILON * Math.max(1, Math.abs(actual), Math.abs(expected), Math.abs(scale));
  assert.ok(Math.abs(actual - expected) <= tol, `${what}: got ${actual}, expected ${expected}`);
}

function expectedCount(n: number, size: number): number {
  if (Number.isNaN(n) || n <= 0) return 0;
  return Math.min(size, Math.trunc(n));
}

function noThrow<T>(what: string, f: () => T): T {
  try {
    return f();
  } catch (err) {
    assert.fail(`${what} threw: ${err instanceof Error ? err.stack : typeof err}`);
  }
}

/** Monotonic anchors the tracker reported at the last check, to see "since" stay put. */
type Anchors = Map<string, number>;

function checkAll(tracker: ConvergenceTracker, model: Model, clock: FakeClock, before: Anchors, touched: string | undefined): Anchors {
  const now = clock.now();
  const mono = clock.monotonic();
  const all = noThrow('top(Infinity)', () => tracker.top(Infinity));
  const size = noThrow('size', () => tracker.size);
  const oldest = noThrow('oldestAgeSeconds()', () => tracker.oldestAgeSeconds());

  const modelKeys = [...model.entries.keys()].sort();
  assert.deepEqual(all.map((e) => e.key).sort(), modelKeys, 'listed objects = unconverged, not forgotten');
  assert.equal(size, modelKeys.length, 'size = number of unconverged live objects');

  const anchors: Anchors = new Map();
  const ms = Math.max(Math.abs(now), Math.abs(mono));
  for (const e of all) {
    const m = model.entries.get(e.key);
    assert.ok(m);
    assert.ok(Number.isFinite(e.sinceMs), `${e.key}: sinceMs ${e.sinceMs} not finite`);
    assert.ok(e.sinceMs <= now, `${e.key}: sinceMs ${e.sinceMs} is in the future of now() ${now}`);
    assert.ok(Number.isFinite(e.ageSeconds) && e.ageSeconds >= 0, `${e.key}: ageSeconds ${e.ageSeconds}`);
    close(e.ageSeconds, (now - e.sinceMs) / 1000, `${e.key}: ageSeconds vs (now - sinceMs)`, ms / 1000);
    const ageMs = mono - model.anchor(e.key);
    close(e.ageSeconds, ageMs / 1000, `${e.key}: ageSeconds vs model (monotonic)`, ms / 1000);
    close(e.sinceMs, now - ageMs, `${e.key}: sinceMs vs model`, ms);
    if (m.last.reason !== undefined) assert.equal(e.reason, m.last.reason, `${e.key}: reason of the last verdict`);
    else assert.equal(typeof e.reason, 'string');
    if (m.last.checkMessage) assert.equal(e.message, m.last.message, `${e.key}: message of the last verdict`);
    if (e.message !== undefined) assert.equal(typeof e.message, 'string');

    // "since" stays put (in the monotonic frame) unless this very object was observed again,
    // and then it can only move earlier.
    const a = mono - (now - e.sinceMs);
    const scale = Math.max(ms, Math.abs(e.sinceMs));
    anchors.set(e.key, a);
    const b = before.get(e.key);
    if (b !== undefined) {
      if (touched === e.key) assert.ok(a <= b + 16 * Number.EPSILON * Math.max(1, scale, Math.abs(b)), `${e.key}: since moved later (${b} -> ${a}) while it stayed unconverged`);
      else close(a, b, `${e.key}: since moved while it stayed unconverged and was not observed`, scale);
    }
  }
  for (let i = 1; i < all.length; i++) {
    const p = all[i - 1] as UnconvergedEntry;
    const c = all[i] as UnconvergedEntry;
    assert.ok(p.sinceMs < c.sinceMs || (p.sinceMs === c.sinceMs && p.key < c.key), `top: order at ${i}: ${p.key}@${p.sinceMs} before ${c.key}@${c.sinceMs}`);
  }
  assert.ok(Number.isFinite(oldest) && oldest >= 0, `oldestAgeSeconds ${oldest}`);
  close(oldest, all[0]?.ageSeconds ?? 0, 'oldestAgeSeconds = age of the first entry (0 when none)', ms / 1000);
  // Queries change nothing.
  assert.deepEqual(tracker.top(Infinity), all, 'top is repeatable');
  assert.equal(tracker.size, size);
  return anchors;
}

function checkTop(tracker: ConvergenceTracker, clock: FakeClock, n: number, nowDelta: number | undefined): void {
  const all = tracker.top(Infinity);
  if (nowDelta === undefined) {
    const got = noThrow(`top(${n})`, () => tracker.top(n));
    assert.deepEqual(got, all.slice(0, expectedCount(n, all.length)), `top(${n}) = first entries of the full list`);
    return;
  }
  const at = clock.now() + nowDelta;
  const got = noThrow(`top(${n}, ${at})`, () => tracker.top(n, at));
  const want = all.slice(0, expectedCount(n, all.length));
  assert.deepEqual(got.map((e) => [e.key, e.sinceMs, e.reason, e.message]), want.map((e) => [e.key, e.sinceMs, e.reason, e.message]));
  for (const e of got) {
    assert.ok(Number.isFinite(e.ageSeconds) && e.ageSeconds >= 0, `top(n, now): ageSeconds ${e.ageSeconds}`);
    close(e.ageSeconds, Math.max(0, at - e.sinceMs) / 1000, `top(n, ${at}): ${e.key} ageSeconds`, Math.max(Math.abs(at), Math.abs(clock.monotonic())) / 1000);
  }
}

function checkOldest(tracker: ConvergenceTracker, clock: FakeClock, nowDelta: number | undefined): void {
  const all = tracker.top(Infinity);
  const at = nowDelta === undefined ? clock.now() : clock.now() + nowDelta;
  const got = noThrow('oldestAgeSeconds(now)', () => (nowDelta === undefined ? tracker.oldestAgeSeconds() : tracker.oldestAgeSeconds(at)));
  assert.ok(Number.isFinite(got) && got >= 0, `oldestAgeSeconds: ${got}`);
  close(got, all.length === 0 ? 0 : Math.max(0, at - (all[0] as UnconvergedEntry).sinceMs) / 1000, 'oldestAgeSeconds(now)', Math.max(Math.abs(at), Math.abs(clock.monotonic())) / 1000);
}

// ---------------------------------------------------------------------------------------------
// The run

function run(start: number, ops: Op[]): void {
  const clock = new FakeClock(start);
  const scripted = new WeakMap<object, Concrete>();
  const fallback = defaultConvergencePredicate();
  const predicate: ConvergencePredicate = (obj) => {
    const s = scripted.get(obj);
    if (!s) return fallback(obj);
    if (s.t === 'throw') throw s.value;
    return s.verdict;
  };
  const tracker = new ConvergenceTracker({ clock, predicate });
  const model = new Model();
  let anchors: Anchors = new Map();
  for (const op of ops) {
    let touched: string | undefined;
    switch (op.t) {
      case 'observe':
      case 'script': {
        const now = clock.now();
        const k = KEYS[op.key] as (typeof KEYS)[number];
        let obj: KubeObject;
        let expect: Expect;
        if (op.t === 'observe') {
          obj = buildObject(op.key, op.spec, now);
          expect = expectDefault(op.spec, now);
        } else {
          obj = { metadata: { ...(k.namespace === undefined ? {} : { namespace: k.namespace }), name: k.name } };
          const c = concretize(op.script, now);
          scripted.set(obj, c.concrete);
          expect = c.expect;
        }
        const unconverged = noThrow(`observe(${k.key})`, () => tracker.observe(obj));
        assert.equal(unconverged, !expect.converged, `observe(${k.key}) returns whether it is unconverged`);
        model.observe(k.key, expect, clock.monotonic(), now);
        touched = k.key;
        break;
      }
      case 'forget': {
        const key = (KEYS[op.key] as (typeof KEYS)[number]).key;
        noThrow('forget', () => tracker.forget(key));
        model.forget(key);
        break;
      }
      case 'forgetUnknown':
        noThrow('forget', () => tracker.forget(UNKNOWN_KEY));
        break;
      case 'advance':
        clock.advance(op.ms);
        break;
      case 'stepWall':
        clock.stepWall(op.ms);
        break;
      case 'top':
        checkTop(tracker, clock, op.n, op.nowDelta);
        break;
      case 'oldest':
        checkOldest(tracker, clock, op.nowDelta);
        break;
    }
    anchors = checkAll(tracker, model, clock, anchors, touched);
  }
}

test('ConvergenceTracker against a model: random observations, deletions, clock moves and wall steps', () => {
  fc.assert(
    fc.property(fc.constantFrom(0, 1_000_000, 1_700_000_000_000), fc.array(opArb, { minLength: 1, maxLength: 60, size: 'max' }), (start, ops) => run(start, ops)),
    { numRuns: RUNS },
  );
});

// ---------------------------------------------------------------------------------------------
// Plain examples of the defects the model found (each failed before the fix)

describe('ConvergenceTracker: wall-clock steps and odd throws (found by the model)', () => {
  const pending = (): KubeObject => ({ metadata: { namespace: 'ns', name: 'a', generation: 1 } });

  it('a backward wall step neither resets the age nor dates the object in the future', () => {
    const clock = new FakeClock(1_000_000);
    const t = new ConvergenceTracker({ clock });
    t.observe(pending());
    clock.advance(60_000);
    clock.stepWall(-3_600_000);
    // Before the fix: oldestAgeSeconds() was 0 and sinceMs 1 000 000, an hour after now().
    assert.equal(t.oldestAgeSeconds(), 60);
    assert.deepEqual(t.top(1).map((e) => [e.sinceMs, e.ageSeconds]), [[clock.now() - 60_000, 60]]);
    t.observe(pending()); // seen again after the step: still the same age
    clock.advance(10_000);
    assert.equal(t.oldestAgeSeconds(), 70);
  });

  it('a forward wall step does not inflate the age', () => {
    const clock = new FakeClock(1_000_000);
    const t = new ConvergenceTracker({ clock });
    t.observe(pending());
    clock.advance(60_000);
    clock.stepWall(3_600_000);
    // Before the fix: 3660.
    assert.equal(t.oldestAgeSeconds(), 60);
    assert.equal(t.top(1)[0]?.sinceMs, clock.now() - 60_000);
  });

  it('a predicate that throws a value String() cannot print still counts as PredicateError', () => {
    const clock = new FakeClock(0);
    const thrown: unknown[] = [Object.create(null) as object, new PrintlessThrow()];
    let i = 0;
    const t = new ConvergenceTracker({
      clock,
      predicate: () => {
        throw thrown[i++];
      },
    });
    // Before the fix: observe threw "TypeError: Cannot convert object to primitive value".
    assert.equal(t.observe({ metadata: { name: 'x' } }), true);
    assert.equal(t.observe({ metadata: { name: 'y' } }), true);
    assert.deepEqual(t.top(5).map((e) => [e.key, e.reason, typeof e.message]), [['x', 'PredicateError', 'string'], ['y', 'PredicateError', 'string']]);
  });
});
