/**
 * Model-based, adversarial search (fast-check) of how `Credentials` behaves over time and under
 * concurrency: what a request is sent with while a token file rotates or an exec credential
 * plugin's credential expires, and what a 401 from a request in flight does.
 *
 * Token files. Random sequences of: atomic replaces (write a temporary file, rename it over),
 * in-place rewrites (truncate, then write; also caught in between), same-content and same-size
 * rewrites, deletes, the file replaced by a directory, contents with surrounding whitespace or
 * none at all; monotonic clock advances around the check interval; batches of concurrent
 * `headers()` calls (several started before any settles) with file changes, clock steps and
 * `invalidate()`s between them while a read is in flight; `invalidate()` with what a request was
 * sent with (the current token, a replaced one, one never sent) or with nothing; with or without
 * the kubeconfig's own `token` (client-go's fallback). Half the runs emulate a filesystem whose
 * timestamps are coarse (every write gets the same mtime, as on 1-second filesystems or within a
 * kernel tick), where size, mtime and inode (reused at once by ext4) say nothing about content.
 * The model is client-go's file token source with Converge's interval: the file is read when no
 * token was read in the last `tokenFileCheckMs` (or after a 401 for the token read last); a read
 * that fails keeps the token read last (or gives the fallback, kept for an interval); one read
 * at a time. A read in flight while the file changes may see any state the file passed through,
 * so the model keeps every state the implementation may be in and prunes by what it answers.
 * Checked on every answer:
 * - once any token was read from the file, `headers()` never rejects;
 * - the token sent is the file's (trimmed) content at some moment of the read that produced it,
 *   or the token read last, never an older one;
 * - a new token in a readable file is sent from the first request one check interval after the
 *   last read (or at once after a failed read or a 401 for the current token), never earlier;
 * - a 401 for a token already replaced (or never sent) does not make the next request read;
 * - concurrent callers share one read; errors name the file and never contain a token.
 *
 * Exec credential plugins (a shell script, as in credentials.test.ts; each run spawns a process,
 * so sequences are short). Random sequences of: what the next run prints (a token, a client
 * certificate and key, both, the same values as last time, or a failure; with
 * expirationTimestamp in the past, soon, later or absent), wall-clock steps (`exec.now`) across
 * the expiry, batches of concurrent `headers()` and `tls()` calls with invalidations and clock
 * steps between them, `invalidate()` with the credentials of the last request, of an older one,
 * or with nothing. The model is client-go's exec authenticator (comparing credentials by value,
 * as the runtime's `UsedCredentials` do). Checked:
 * - the plugin runs exactly when the model says (counted by the script): concurrent callers
 *   share one run; a credential is kept until its expiry by the clock given (then never sent
 *   from the cache) or a 401 for it; a 401 for credentials already replaced runs nothing;
 * - every answer carries exactly the cached credential or the one the shared run produced;
 * - `tls().id` changes exactly when the client certificate does (and is never reused);
 * - a failed run rejects its callers with an error quoting no token, certificate or key.
 *
 * `npm test` runs 1 000 token-file and 100 exec sequences (≈ 5 s; the exec ones spawn ≈ 150
 * plugin processes); CONVERGE_RELIABILITY_LONG=1 runs ten times as many. CONVERGE_MODEL_RUNS
 * overrides the token-file count.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Credentials, KubeConfig, KubeConfigError } from './index.ts';
import type { KubeConfigUser, TlsMaterial, UsedCredentials } from './index.ts';

const LONG = process.env.CONVERGE_RELIABILITY_LONG === '1';
const TOKEN_FILE_RUNS = Number(process.env.CONVERGE_MODEL_RUNS ?? (LONG ? 10_000 : 1_000));
const EXEC_RUNS = LONG ? 1_000 : 100;

function config(user: Partial<KubeConfigUser>): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:6443' }],
    users: [{ name: 'u', ...user }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  kc.source = '/test/kubeconfig';
  return kc;
}

type Settled<T> = { ok: true; value: T; order: number } | { ok: false; error: unknown; order: number };

/** Starts `p` now; records when (relative to the others) it settled. */
function track<T>(p: Promise<T>, counter: { n: number }): Promise<Settled<T>> {
  return p.then(
    (value) => ({ ok: true as const, value, order: counter.n++ }),
    (error: unknown) => ({ ok: false as const, error, order: counter.n++ }),
  );
}

// ---------------------------------------------------------------------------------------------
// Token files
// ---------------------------------------------------------------------------------------------

const CHECK_MS = 1000;
/** Same-length tokens (so same-size rewrites are common) and a longer one. */
const TOKENS = ['tok-a1', 'tok-b2', 'tok-c3', 'tok-long-d4'];
const FALLBACK = 'kubeconfig-fallback';
/** A token never in the file: a 401 for it is a 401 for something else. */
const FOREIGN = 'tok-zz';
const COARSE_MTIME = 1_700_000_000; // s: every write gets this mtime when timestamps are coarse

type FileState = { kind: 'file'; content: string } | { kind: 'missing' } | { kind: 'dir' };
type FileOp =
  | { t: 'atomic'; content: string }
  | { t: 'inplace'; content: string }
  | { t: 'sameSize'; token: number }
  | { t: 'truncate' }
  | { t: 'delete' }
  | { t: 'dir' };
type UsedPick = { k: 'none' } | { k: 'sent'; back: number } | { k: 'foreign' } | { k: 'fallback' };
type TfSync = FileOp | { t: 'clock'; d: number } | { t: 'invalidate'; used: UsedPick };
type TfStep = TfSync | { t: 'batch'; items: Array<{ t: 'call' } | TfSync> };

const tokenArb = fc.nat(TOKENS.length - 1).map((i) => TOKENS[i]!);
const contentArb = fc.oneof(
  { weight: 6, arbitrary: tokenArb },
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom('', '\n', ' ', '\t\n'), tokenArb, fc.constantFrom('', '\n', ' \n', '\r\n')).map(([a, t, b]) => a + t + b) },
  { weight: 1, arbitrary: fc.constantFrom('', '\n', '  \n') },
);
const fileOpArb: fc.Arbitrary<FileOp> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ t: fc.constant('atomic' as const), content: contentArb }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('inplace' as const), content: contentArb }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('sameSize' as const), token: fc.nat(TOKENS.length - 1) }) },
  { weight: 2, arbitrary: fc.constant({ t: 'truncate' as const }) },
  { weight: 1, arbitrary: fc.constant({ t: 'delete' as const }) },
  { weight: 1, arbitrary: fc.constant({ t: 'dir' as const }) },
);
const clockArb = fc.oneof(fc.constantFrom(0, 1, CHECK_MS - 1, CHECK_MS, CHECK_MS + 1, 2 * CHECK_MS + 500), fc.integer({ min: 0, max: 3 * CHECK_MS }));
const usedArb: fc.Arbitrary<UsedPick> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({ k: 'none' as const }) },
  { weight: 5, arbitrary: fc.record({ k: fc.constant('sent' as const), back: fc.oneof(fc.constant(0), fc.nat(3)) }) },
  { weight: 1, arbitrary: fc.constant({ k: 'foreign' as const }) },
  { weight: 1, arbitrary: fc.constant({ k: 'fallback' as const }) },
);
const tfSyncArb: fc.Arbitrary<TfSync> = fc.oneof(
  { weight: 5, arbitrary: fileOpArb },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('clock' as const), d: clockArb }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('invalidate' as const), used: usedArb }) },
);
const tfStepArb: fc.Arbitrary<TfStep> = fc.oneof(
  { weight: 5, arbitrary: tfSyncArb },
  {
    weight: 5,
    arbitrary: fc.record({
      t: fc.constant('batch' as const),
      items: fc.array(fc.oneof({ weight: 3, arbitrary: fc.constant({ t: 'call' as const }) }, { weight: 2, arbitrary: tfSyncArb }), { minLength: 1, maxLength: 6 }),
    }),
  },
);
const initialArb: fc.Arbitrary<FileState> = fc.oneof(
  { weight: 6, arbitrary: contentArb.map((content) => ({ kind: 'file' as const, content })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'missing' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'dir' as const }) },
);

/** What a same-size rewrite writes: a token of the current content's length (none if empty). */
function sameSizeContent(current: FileState, token: number): string | undefined {
  if (current.kind !== 'file' || current.content.length === 0) return undefined;
  const n = current.content.length;
  let s = '';
  for (let i = 0; s.length < n; i++) s += TOKENS[(token + i) % TOKENS.length]!;
  return s.slice(0, n);
}

/** The model of a file op: the state it leaves. */
function applyModel(state: FileState, op: FileOp): FileState {
  switch (op.t) {
    case 'atomic':
    case 'inplace':
      return { kind: 'file', content: op.content };
    case 'sameSize': {
      const content = sameSizeContent(state, op.token);
      return content === undefined ? state : { kind: 'file', content };
    }
    case 'truncate':
      return state.kind === 'file' ? { kind: 'file', content: '' } : state;
    case 'delete':
      return { kind: 'missing' };
    case 'dir':
      return { kind: 'dir' };
  }
}

/** The same op on disk. With coarse timestamps every write leaves the same mtime. */
function applyDisk(file: string, state: FileState, op: FileOp, coarse: boolean): void {
  const clear = () => {
    if (state.kind === 'dir') rmSync(file, { recursive: true });
  };
  const stamp = () => {
    if (coarse) utimesSync(file, COARSE_MTIME, COARSE_MTIME);
  };
  switch (op.t) {
    case 'atomic':
      writeFileSync(`${file}.new`, op.content);
      if (coarse) utimesSync(`${file}.new`, COARSE_MTIME, COARSE_MTIME);
      clear();
      renameSync(`${file}.new`, file);
      return;
    case 'inplace':
      clear();
      writeFileSync(file, op.content); // O_TRUNC, then write: same inode
      stamp();
      return;
    case 'sameSize': {
      const content = sameSizeContent(state, op.token);
      if (content === undefined) return;
      writeFileSync(file, content);
      stamp();
      return;
    }
    case 'truncate':
      if (state.kind !== 'file') return;
      truncateSync(file, 0);
      stamp();
      return;
    case 'delete':
      rmSync(file, { recursive: true, force: true });
      return;
    case 'dir':
      rmSync(file, { recursive: true, force: true });
      mkdirSync(file);
      return;
  }
}

function readable(f: FileState): string | undefined {
  if (f.kind !== 'file') return undefined;
  const t = f.content.trim();
  return t === '' ? undefined : t;
}

function describeFile(f: FileState): string {
  return f.kind === 'file' ? JSON.stringify(f.content) : f.kind;
}

/** What the implementation may hold: the token read last, and when the file was last checked. */
interface TfModel {
  token: string | undefined;
  checkedAt: number;
}

type Expect = { k: 'immediate'; value: string } | { k: 'read' };
type Outcome = { state: TfModel; result: { ok: true; value: string } | { ok: false } };

async function runTokenFile(initial: FileState, withFallback: boolean, coarse: boolean, steps: TfStep[]): Promise<void> {
  const d = mkdtempSync(join(tmpdir(), 'converge-credentials-model-'));
  try {
    const file = join(d, 'token');
    let disk = { kind: 'missing' } as FileState;
    const apply = (op: FileOp) => {
      applyDisk(file, disk, op, coarse);
      disk = applyModel(disk, op);
    };
    if (initial.kind === 'file') apply({ t: 'inplace', content: initial.content });
    else if (initial.kind === 'dir') apply({ t: 'dir' });
    let now = 0;
    const c = new Credentials(config({ tokenFile: file, ...(withFallback ? { token: FALLBACK } : {}) }), { tokenFileCheckMs: CHECK_MS, monotonic: () => now });
    const fallback = withFallback ? FALLBACK : undefined;
    let states: TfModel[] = [{ token: undefined, checkedAt: -Infinity }];
    /** Tokens sent, oldest first (distinct). */
    const sent: string[] = [];
    let everRead = false;
    const trace: string[] = [`start: file ${describeFile(disk)}${withFallback ? `, fallback token ${FALLBACK}` : ''}${coarse ? ', coarse timestamps' : ''}`];
    const fail: (msg: string) => never = (msg) => assert.fail(`${msg}\n--- trace ---\n${trace.join('\n')}`);

    const usedOf = (pick: UsedPick): UsedCredentials | undefined => {
      switch (pick.k) {
        case 'none':
          return undefined;
        case 'sent': {
          const t = sent[sent.length - 1 - Math.min(pick.back, sent.length - 1)];
          return { authorization: t === undefined ? undefined : `Bearer ${t}`, tlsId: 'static' };
        }
        case 'foreign':
          return { authorization: `Bearer ${FOREIGN}`, tlsId: 'static' };
        case 'fallback':
          return { authorization: `Bearer ${FALLBACK}`, tlsId: 'static' };
      }
    };
    /** The model's invalidate. */
    const invalidateModel = (s: TfModel, used: UsedCredentials | undefined): TfModel =>
      !used || s.token === undefined || used.authorization === `Bearer ${s.token}` ? { ...s, checkedAt: -Infinity } : s;

    for (const [i, step] of steps.entries()) {
      const items = step.t === 'batch' ? step.items : [step];
      const startNow = now;
      const startFile = disk;
      // Run the batch: everything up to the await is synchronous, so the calls see the state
      // (clock, invalidations) at the moment they were made, and a read started by one of them
      // may see any state the file passes through until the end.
      const counter = { n: 0 };
      const calls: Array<Promise<Settled<Record<string, string | string[]>>>> = [];
      const lines: string[] = [];
      for (const item of items) {
        switch (item.t) {
          case 'call':
            calls.push(track(c.headers(), counter));
            lines.push(`  headers() #${calls.length - 1} at ${now}`);
            break;
          case 'clock':
            now += item.d;
            lines.push(`  clock +${item.d} = ${now}`);
            break;
          case 'invalidate': {
            const used = usedOf(item.used);
            c.invalidate(used);
            lines.push(`  invalidate(${used ? `"${used.authorization}"` : ''})`);
            break;
          }
          default:
            apply(item);
            lines.push(`  ${item.t}${'content' in item ? ` ${JSON.stringify(item.content)}` : ''} -> file ${describeFile(disk)}`);
        }
      }
      const results = await Promise.all(calls);
      const answers = results.map((r) => (r.ok ? (r.value.authorization ?? '(none)') : `rejected: ${(r.error as Error).message}`));
      trace.push(`step ${i}${step.t === 'batch' ? ' (batch)' : ''}:`, ...lines, ...(calls.length ? [`  answers: ${answers.join(' | ')}`] : []));

      // Invariants that hold whatever state the implementation is in.
      const before = new Set(states.map((s) => s.token ?? (withFallback ? FALLBACK : undefined)));
      const passed: FileState[] = [startFile];
      {
        let f = startFile;
        for (const item of items) if (item.t !== 'call' && item.t !== 'clock' && item.t !== 'invalidate') passed.push((f = applyModel(f, item)));
      }
      const contents = new Set(passed.map(readable).filter((t) => t !== undefined));
      for (const r of results) {
        if (!r.ok) {
          if (everRead) fail(`step ${i}: headers() rejected after a token was read: ${(r.error as Error).message}`);
          if (!(r.error instanceof KubeConfigError)) fail(`step ${i}: rejected with ${String(r.error)}, not a KubeConfigError`);
          const msg = (r.error as Error).message;
          if (!msg.includes(file)) fail(`step ${i}: the error does not name the file: ${msg}`);
          for (const t of [...TOKENS, FALLBACK]) if (msg.includes(t)) fail(`step ${i}: the error quotes a token: ${msg}`);
          continue;
        }
        const auth = r.value.authorization as string | undefined;
        const token = auth?.replace(/^Bearer /, '');
        if (token === undefined || auth !== `Bearer ${token}`) fail(`step ${i}: no bearer token: ${JSON.stringify(r.value)}`);
        if (!before.has(token) && !contents.has(token!)) {
          fail(`step ${i}: sent "${token}", which is neither the token held before (${[...before].join(', ')}) nor the file's content during the read (${[...contents].join(', ')})`);
        }
      }

      // The model: every state the implementation may be in, and what it answers from each.
      const next = new Map<string, TfModel>();
      for (const s0 of states) {
        let s = s0;
        let clock = startNow;
        let file = startFile;
        let window: FileState[] | undefined;
        const expect: Expect[] = [];
        for (const item of items) {
          switch (item.t) {
            case 'call': {
              const current = s.token ?? (s.checkedAt > -Infinity ? fallback : undefined);
              if (current !== undefined && clock - s.checkedAt < CHECK_MS) expect.push({ k: 'immediate', value: current });
              else {
                window ??= [file];
                expect.push({ k: 'read' });
              }
              break;
            }
            case 'clock':
              clock += item.d;
              break;
            case 'invalidate':
              s = invalidateModel(s, usedOf(item.used));
              break;
            default:
              file = applyModel(file, item);
              window?.push(file);
          }
        }
        const outcomes: Outcome[] = [];
        if (!window) outcomes.push({ state: s, result: { ok: false } });
        else {
          for (const f of window) {
            const t = readable(f);
            if (t !== undefined) outcomes.push({ state: { token: t, checkedAt: clock }, result: { ok: true, value: t } });
            else if (s.token !== undefined) outcomes.push({ state: s, result: { ok: true, value: s.token } });
            else if (fallback !== undefined) outcomes.push({ state: { token: undefined, checkedAt: clock }, result: { ok: true, value: fallback } });
            else outcomes.push({ state: s, result: { ok: false } });
          }
        }
        for (const o of outcomes) {
          const fits = expect.every((e, k) => {
            const r = results[k]!;
            if (e.k === 'immediate') return r.ok && r.value.authorization === `Bearer ${e.value}`;
            return o.result.ok ? r.ok && r.value.authorization === `Bearer ${o.result.value}` : !r.ok;
          });
          if (fits) next.set(`${o.state.token}|${o.state.checkedAt}`, o.state);
        }
      }
      if (next.size === 0) {
        const modelSays = states
          .map((s) => `  from token ${s.token ?? '(none)'} checked at ${s.checkedAt}`)
          .join('\n');
        fail(`step ${i}: no state the model allows gives these answers (${answers.join(' | ')});\nstates before:\n${modelSays}`);
      }
      states = [...next.values()];
      for (const r of results) {
        if (!r.ok) continue;
        const t = (r.value.authorization as string).slice('Bearer '.length);
        if (t !== FALLBACK) everRead = true;
        const at = sent.indexOf(t);
        if (at >= 0) sent.splice(at, 1);
        sent.push(t);
      }
    }
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Exec credential plugins
// ---------------------------------------------------------------------------------------------

const WALL0 = Date.parse('2030-01-01T00:00:00Z');

type Expiry = 'absent' | 'past' | 'soon' | 'later';
type Output = { kind: 'token' | 'cert' | 'both' | 'fail'; exp: Expiry; reuse: boolean };
type ExecSync = { t: 'clock'; d: number } | { t: 'toExpiry'; offset: number } | { t: 'invalidate'; used: 'none' | 'current' | { back: number } };
type ExecStep = { t: 'output'; out: Output } | ExecSync | { t: 'batch'; items: Array<{ t: 'headers' } | { t: 'tls' } | ExecSync> };

const outputArb: fc.Arbitrary<Output> = fc.record({
  kind: fc.oneof({ weight: 3, arbitrary: fc.constant('token' as const) }, { weight: 3, arbitrary: fc.constant('cert' as const) }, { weight: 1, arbitrary: fc.constant('both' as const) }, { weight: 2, arbitrary: fc.constant('fail' as const) }),
  exp: fc.constantFrom<Expiry>('absent', 'past', 'soon', 'later'),
  reuse: fc.boolean(),
});
const execSyncArb: fc.Arbitrary<ExecSync> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ t: fc.constant('clock' as const), d: fc.constantFrom(-61_000, -1, 1, 999, 1_001, 61_000, 3_600_000) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('toExpiry' as const), offset: fc.constantFrom(-1, 0, 1) }) },
  {
    weight: 3,
    arbitrary: fc.record({ t: fc.constant('invalidate' as const), used: fc.oneof(fc.constant('none' as const), fc.constant('current' as const), fc.record({ back: fc.integer({ min: 1, max: 3 }) })) }),
  },
);
const execStepArb: fc.Arbitrary<ExecStep> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ t: fc.constant('output' as const), out: outputArb }) },
  { weight: 2, arbitrary: execSyncArb },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('batch' as const),
      items: fc.array(fc.oneof({ weight: 2, arbitrary: fc.constantFrom({ t: 'headers' as const }, { t: 'tls' as const }) }, { weight: 1, arbitrary: execSyncArb }), { minLength: 1, maxLength: 5 }),
    }),
  },
);

interface ExecCred {
  token?: string;
  cert?: string;
  key?: string;
  exp: number;
}

/** A plugin as a shell script: counts its runs, fails when `fail` exists, else prints `out`. */
function script(d: string): string {
  const path = join(d, 'plugin.sh');
  writeFileSync(path, `#!/bin/sh\necho x >> "${d}/runs"\nif [ -f "${d}/fail" ]; then echo "plugin says: $(cat "${d}/fail")" >&2; exit 3; fi\ncat "${d}/out"\n`);
  chmodSync(path, 0o755);
  return path;
}

async function runExec(apiVersion: string, steps: ExecStep[]): Promise<void> {
  const d = mkdtempSync(join(tmpdir(), 'converge-credentials-model-'));
  try {
    const command = script(d);
    let wall = WALL0;
    const c = new Credentials(config({ exec: { command, apiVersion } }), { exec: { now: () => wall } });
    const runsOnDisk = () => {
      try {
        return readFileSync(join(d, 'runs'), 'utf8').trim().split('\n').length;
      } catch {
        return 0;
      }
    };
    // What the next run gives (initially a token without expiry).
    let output: ExecCred | 'fail' = { token: 'etok-0', exp: Infinity };
    let last: ExecCred = output;
    let serial = 0;
    const secrets = new Set<string>(['etok-0']);
    const print = (cred: ExecCred | 'fail') => {
      rmSync(join(d, 'fail'), { force: true });
      if (cred === 'fail') {
        writeFileSync(join(d, 'fail'), 'cannot log in, run login');
        return;
      }
      const status: Record<string, string> = {};
      if (cred.token) status.token = cred.token;
      if (cred.cert) Object.assign(status, { clientCertificateData: cred.cert, clientKeyData: cred.key });
      if (cred.exp !== Infinity) status.expirationTimestamp = new Date(cred.exp).toISOString();
      writeFileSync(join(d, 'out'), JSON.stringify({ apiVersion, kind: 'ExecCredential', status }));
    };
    print(output);

    // The model.
    let cached: ExecCred | undefined;
    let runs = 0;
    let lastTls: { id: string; cert: string } | undefined;
    /** The expiry of the last credential a run gave that has one (the clock is stepped around it). */
    let lastExp: number | undefined;
    const ids = new Set<string>(['static']);
    /** What requests were sent with, oldest first. */
    const requests: UsedCredentials[] = [];
    const trace: string[] = [`start: ${apiVersion}, wall clock ${new Date(wall).toISOString()}`];
    const fail: (msg: string) => never = (msg) => assert.fail(`${msg}\n--- trace ---\n${trace.join('\n')}`);
    const show = (cr: ExecCred | undefined) =>
      cr ? `${[cr.token, cr.cert].filter(Boolean).join('+')}${cr.exp === Infinity ? '' : ` exp ${cr.exp - WALL0}`}` : '(none)';
    const usedOf = (u: 'none' | 'current' | { back: number }): UsedCredentials | undefined => {
      if (u === 'none') return undefined;
      const back = u === 'current' ? 0 : u.back;
      return requests[requests.length - 1 - Math.min(back, requests.length - 1)] ?? {};
    };
    const isCurrent = (used: UsedCredentials): boolean => {
      if (!cached) return false;
      if (cached.token) return used.authorization === `Bearer ${cached.token}`;
      return lastTls !== undefined && used.tlsId === lastTls.id && lastTls.cert === cached.cert;
    };

    for (const [i, step] of steps.entries()) {
      if (step.t === 'output') {
        const o = step.out;
        if (o.kind === 'fail') output = 'fail';
        else {
          const n = ++serial;
          const reuse = o.reuse;
          const cred: ExecCred = {
            exp: { absent: Infinity, past: wall - 1_000, soon: wall + 1_000, later: wall + 3_600_000 }[o.exp],
          };
          if (o.kind !== 'cert') cred.token = reuse && last.token ? last.token : `etok-${n}`;
          if (o.kind !== 'token') {
            cred.cert = reuse && last.cert ? last.cert : `CERT-${n}`;
            cred.key = reuse && last.key ? last.key : `KEY-${n}`;
          }
          for (const v of [cred.token, cred.cert, cred.key]) if (v) secrets.add(v);
          output = last = cred;
        }
        print(output);
        trace.push(`step ${i}: the next run gives ${output === 'fail' ? 'a failure' : show(output)}`);
        continue;
      }
      const items = step.t === 'batch' ? step.items : [step];
      const counter = { n: 0 };
      type Call = { kind: 'headers' | 'tls'; expect: ExecCred | 'run'; at: number; p: Promise<Settled<Record<string, string | string[]> | TlsMaterial>> };
      const calls: Call[] = [];
      let running = false;
      const lines: string[] = [];
      for (const item of items) {
        switch (item.t) {
          case 'headers':
          case 'tls': {
            let expect: ExecCred | 'run';
            if (cached && wall < cached.exp) expect = cached;
            else {
              expect = 'run';
              if (!running) runs++;
              running = true;
            }
            calls.push({ kind: item.t, expect, at: wall, p: track<Record<string, string | string[]> | TlsMaterial>(item.t === 'headers' ? c.headers() : c.tls(), counter) });
            lines.push(`  ${item.t}() at ${wall - WALL0}: ${expect === 'run' ? 'run' : `cached ${show(expect)}`}`);
            break;
          }
          case 'clock':
            wall += item.d;
            lines.push(`  clock ${item.d > 0 ? '+' : ''}${item.d} = ${wall - WALL0}`);
            break;
          case 'toExpiry':
            if (lastExp !== undefined) wall = lastExp + item.offset;
            lines.push(`  clock to the last expiry ${item.offset >= 0 ? '+' : ''}${item.offset} = ${wall - WALL0}`);
            break;
          case 'invalidate': {
            const used = usedOf(item.used);
            const drops = !used || isCurrent(used);
            c.invalidate(used);
            if (drops) cached = undefined;
            lines.push(`  invalidate(${used ? JSON.stringify(used) : ''})${drops ? ': drops the cached credential' : ''}`);
            break;
          }
        }
      }
      const settled = await Promise.all(calls.map((x) => x.p));
      // The shared run's outcome becomes the cached credential (a failure keeps what was there).
      const produced = running && output !== 'fail' ? output : undefined;
      if (produced) cached = produced;
      if (produced && produced.exp !== Infinity) lastExp = produced.exp;
      const describeResult = (r: Settled<Record<string, string | string[]> | TlsMaterial>) =>
        r.ok ? ('id' in r.value ? `tls ${r.value.id} ${r.value.cert ?? ''}` : (r.value.authorization ?? '{}')) : `rejected: ${(r.error as Error).message}`;
      trace.push(`step ${i}${step.t === 'batch' ? ' (batch)' : ''}:`, ...lines, `  answers: ${settled.map(describeResult).join(' | ')}`, `  cached now ${show(cached)}`);

      if (runsOnDisk() !== runs) fail(`step ${i}: the plugin ran ${runsOnDisk()} times, the model says ${runs}`);
      // Check each answer; TLS ids in the order the answers settled (the order they were minted).
      const byOrder = calls.map((call, k) => ({ call, r: settled[k]! })).sort((a, b) => a.r.order - b.r.order);
      let headersAuth: string | undefined;
      let tlsId: string | undefined;
      for (const { call, r } of byOrder) {
        const cred = call.expect === 'run' ? produced : call.expect;
        if (!cred) {
          if (r.ok) fail(`step ${i}: ${call.kind}() answered although the shared run failed`);
          const msg = (r.error as Error).message;
          if (!(r.error instanceof KubeConfigError) || !/failed \(exit 3\): plugin says: cannot log in/.test(msg)) fail(`step ${i}: unexpected error: ${msg}`);
          for (const s of secrets) if (msg.includes(s)) fail(`step ${i}: the error quotes a secret: ${msg}`);
          continue;
        }
        if (!r.ok) fail(`step ${i}: ${call.kind}() rejected: ${(r.error as Error).message}`);
        if (call.expect !== 'run' && !(call.at < cred.exp)) fail(`step ${i}: model error: an expired credential from the cache`);
        const value = (r as { value: Record<string, string | string[]> | TlsMaterial }).value;
        if (call.kind === 'headers') {
          const want = cred.token ? { authorization: `Bearer ${cred.token}` } : {};
          assert.deepEqual(value, want, `step ${i}: headers() sent ${JSON.stringify(value)}, expected ${show(cred)}\n--- trace ---\n${trace.join('\n')}`);
          headersAuth = (value as Record<string, string>).authorization;
        } else {
          const tls = value as TlsMaterial;
          if (!cred.cert) {
            if (tls.id !== 'static' || tls.cert !== undefined) fail(`step ${i}: tls() gave ${tls.id} ${tls.cert} for a token credential`);
          } else {
            if (tls.cert !== cred.cert || tls.key !== cred.key) fail(`step ${i}: tls() gave ${tls.cert}/${tls.key}, expected ${cred.cert}/${cred.key}`);
            if (lastTls && lastTls.cert === cred.cert) {
              if (tls.id !== lastTls.id) fail(`step ${i}: tls().id changed from ${lastTls.id} to ${tls.id} for the same certificate ${cred.cert}`);
            } else {
              if (ids.has(tls.id)) fail(`step ${i}: tls().id ${tls.id} for the new certificate ${cred.cert} was used before`);
              ids.add(tls.id);
              lastTls = { id: tls.id, cert: cred.cert };
            }
          }
          tlsId = tls.id;
        }
      }
      if (headersAuth !== undefined || tlsId !== undefined) requests.push({ authorization: headersAuth, tlsId: tlsId ?? 'static' });
    }
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
}

describe('credentials over time (model-based, fast-check)', () => {
  it('token files: rotations, failed reads, concurrent requests and 401s', async () => {
    await fc.assert(
      fc.asyncProperty(initialArb, fc.boolean(), fc.boolean(), fc.array(tfStepArb, { minLength: 1, maxLength: 30 }), runTokenFile),
      { numRuns: TOKEN_FILE_RUNS },
    );
  });

  it('exec plugins: expiry, failures, concurrent requests and 401s', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'), fc.array(execStepArb, { minLength: 1, maxLength: 10 }), runExec),
      { numRuns: EXEC_RUNS },
    );
  });
});
