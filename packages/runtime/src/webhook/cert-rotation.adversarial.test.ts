/**
 * Adversarial search of serving-certificate rotation: `certDirCertificates` (certificates.ts)
 * feeding a real `WebhookServer` (webhook-server.ts) on 127.0.0.1:0, with real TLS clients. The
 * contract searched: a folder that is missing or half-written (a file cut short, a key that does
 * not match its certificate yet) is retried, never served; a renewed pair is swapped in place
 * (open connections keep theirs, new ones get the new one); `ready()` is true once listening with
 * a certificate; `start()` settles on abort, with every connection closed.
 *
 * Searched (fast-check; one folder and one server per program): random programs of writes to the
 * certificate folder, interleaved with polls of the source and with clients:
 * - the folder's layout: a `kubernetes.io/tls` Secret volume as the kubelet's AtomicWriter writes
 *   it (each payload in a new `..2026_…` folder, a `..data_tmp -> ..2026_…` link renamed onto
 *   `..data`, `tls.crt -> ..data/tls.crt` links made once, a link removed when its key leaves the
 *   payload, the old folder removed last), or plain files written in place, file by file, in
 *   either order, each possibly cut inside one of its PEM blocks for a while (a prefix, then the
 *   rest), an unchanged file rewritten or left alone;
 * - renewals from a fixed set made once per run: two roots, an intermediate (tls.crt of 2 or 3 PEM
 *   blocks, as cert-manager writes a chain), P-256 keys in PKCS#8 and SEC1, an RSA key; renewals
 *   that keep the key (`rotationPolicy: Never`, once re-encoded) or change it;
 * - breakage: a file missing, a directory in its place, garbage (text, a junk PEM block, random
 *   bytes, empty, the key and the certificate swapped), restored or left until the next renewal;
 * - the source's polls (`pollMs` 10): driven one at a time through an injected clock, either
 *   awaited at an exact point of the writing or left running across the next writes (a read that
 *   straddles an atomic swap, or a file being rewritten), or free-running on real timers;
 * - clients trusting both roots: short connections (a handshake, sometimes a POST /convert),
 *   connections held open across renewals and used again, TCP connections that never handshake;
 *   the server is stopped with them open.
 *
 * Checked against a model of the folder (what each file holds at each moment, as its only writer):
 * - until the folder first holds a complete matching pair, the server neither listens nor settles;
 *   after, `listening()` resolves and `ready()` is true at every later check;
 * - every handshake completes (both roots trusted: a mismatched key, a garbage or a cut chain
 *   fails it), and presents a certificate the model allows: one served before, or one of the
 *   complete matching pairs the folder held while a poll could read it (a read straddling writes
 *   may take the certificate of one moment and the key of another: such pairs count when they
 *   match);
 * - a new pair is served once two reads in a row found it (the source's settle rule): after two
 *   polls that read the same complete matching pair (none in flight, no write meanwhile) exactly
 *   that certificate is served, after one it may be (a read in flight before may have found it
 *   too); once the folder holds one and stays so, new connections get it by the second poll;
 * - a held connection answers a request after any number of swaps;
 * - `start()` settles within 2 s of the abort, with clients connected; they are closed within 2 s;
 *   no unhandled rejection.
 *
 * Not searched: a chain file cut exactly between two PEM blocks (the leaf alone of a leaf +
 * intermediate file) is a complete, matching pair that no check can tell from a whole one; the
 * settle rule keeps it from being served when the rest follows within `settleMs` (webhook.test.ts
 * has that example), and a cut held across two polls here would be served, so the cuts are inside
 * a block. Our files are < 4 KiB, one write each: a reader does not see part of one write.
 *
 * Runs: 250 programs (about 10 s on 2 cores); CONVERGE_RELIABILITY_LONG=1 runs 2 500 (about 2 min). The test
 * also fails when the programs never made one of the situations above happen (`stats`: a folder
 * polled while cut short, a chain cut after its leaf with its key in place, a mismatched pair, a
 * poll running across writes, a swap seen by a client, a held connection used after a swap...).
 * A failure prints the program, fast-check's seed and the trace of the failing run (what was
 * written, polled, served); replay with `CONVERGE_FC_SEED=<seed> npm run test:unit -- packages/runtime/src/webhook/cert-rotation.adversarial.test.ts`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, open, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as netConnect } from 'node:net';
import type { Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { TLSSocket } from 'node:tls';
import { X509Certificate, createPrivateKey, randomBytes } from 'node:crypto';
import type { webcrypto } from 'node:crypto';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import fc from 'fast-check';
import { WebhookServer } from './webhook-server.ts';
import { certDirCertificates } from './certificates.ts';
import { toyBoxConversions } from './toy-box.test-support.ts';
import type { Clock, Timer } from '../clock/index.ts';
import { within } from '../clock/settles-within.test-support.ts';

const LONG = process.env.CONVERGE_RELIABILITY_LONG === '1';
const RUNS = LONG ? 2_500 : 250;
const POLL_MS = 10;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// Certificates, made once

const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const RSA = { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' } as const;
const DAY = 86_400_000;

interface Issuer { cert: x509.X509Certificate; keys: webcrypto.CryptoKeyPair }

/** One renewal as cert-manager would write it: `tls.crt` (leaf first, then its chain) and `tls.key`. */
interface Renewal {
  name: string;
  certPem: string;
  keyPem: string;
  /** The same for renewals that keep the key, whatever its encoding. */
  keyId: string;
  /** `fingerprint256` of the leaf, as a client's `getPeerCertificate()` gives it. */
  leaf: string;
}

const serial = () => {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f;
  return bytes.toString('hex');
};
const pemOf = (cert: x509.X509Certificate) => cert.toString('pem').trim();

async function rootCa(name: string): Promise<Issuer> {
  const keys = await crypto.subtle.generateKey(EC, true, ['sign', 'verify']);
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(), name: `CN=${name}`, notBefore: new Date(now - DAY), notAfter: new Date(now + 30 * DAY), keys, signingAlgorithm: EC,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert, keys };
}

async function intermediateCa(name: string, parent: Issuer): Promise<Issuer> {
  const keys = await crypto.subtle.generateKey(EC, true, ['sign', 'verify']);
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(), subject: `CN=${name}`, issuer: parent.cert.subject, notBefore: new Date(now - DAY), notAfter: new Date(now + 30 * DAY),
    signingKey: parent.keys.privateKey, publicKey: keys.publicKey, signingAlgorithm: EC,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(parent.cert),
    ],
  });
  return { cert, keys };
}

async function leafFor(publicKey: webcrypto.CryptoKey, issuer: Issuer, cn: string): Promise<x509.X509Certificate> {
  const now = Date.now();
  return x509.X509CertificateGenerator.create({
    serialNumber: serial(), subject: `CN=${cn}`, issuer: issuer.cert.subject, notBefore: new Date(now - DAY), notAfter: new Date(now + 10 * DAY),
    signingKey: issuer.keys.privateKey, publicKey, signingAlgorithm: EC,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([{ type: 'ip', value: '127.0.0.1' }, { type: 'dns', value: 'localhost' }]),
      await x509.AuthorityKeyIdentifierExtension.create(issuer.cert),
    ],
  });
}

async function keyPem(keys: webcrypto.CryptoKeyPair, type: 'pkcs8' | 'sec1' | 'pkcs1'): Promise<string> {
  const der = Buffer.from(await crypto.subtle.exportKey('pkcs8', keys.privateKey));
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).export({ type, format: 'pem' }).toString();
}

interface Pki { roots: string[]; renewals: Renewal[] }

async function makePki(): Promise<Pki> {
  const rootA = await rootCa('Rotation root A');
  const rootB = await rootCa('Rotation root B');
  const inter = await intermediateCa('Rotation intermediate A1', rootA);
  const ec = () => crypto.subtle.generateKey(EC, true, ['sign', 'verify']);
  const [k1, k2, k3, k5] = await Promise.all([ec(), ec(), ec(), ec()]);
  const k4 = await crypto.subtle.generateKey(RSA, true, ['sign', 'verify']);
  const renewal = async (name: string, keys: webcrypto.CryptoKeyPair, keyId: string, encoding: 'pkcs8' | 'sec1' | 'pkcs1', issuer: Issuer, chain: x509.X509Certificate[]): Promise<Renewal> => {
    const leaf = await leafFor(keys.publicKey, issuer, name);
    return {
      name,
      certPem: `${[leaf, ...chain].map(pemOf).join('\n')}\n`,
      keyPem: await keyPem(keys, encoding),
      keyId,
      leaf: new X509Certificate(leaf.toString('pem')).fingerprint256,
    };
  };
  const renewals = [
    await renewal('r0 root A, key 1', k1, 'k1', 'pkcs8', rootA, []),
    await renewal('r1 root A, key 1 kept', k1, 'k1', 'pkcs8', rootA, []),
    await renewal('r2 root A, key 1 kept as SEC1', k1, 'k1', 'sec1', rootA, []),
    await renewal('r3 intermediate, key 2', k2, 'k2', 'sec1', inter, [inter.cert]),
    await renewal('r4 intermediate, key 2 kept', k2, 'k2', 'sec1', inter, [inter.cert]),
    await renewal('r5 root B, key 3', k3, 'k3', 'pkcs8', rootB, []),
    await renewal('r6 root A, RSA key 4', k4, 'k4', 'pkcs1', rootA, []),
    await renewal('r7 intermediate and root, key 5', k5, 'k5', 'pkcs8', inter, [inter.cert, rootA.cert]),
  ];
  return { roots: [pemOf(rootA.cert), pemOf(rootB.cert)], renewals };
}

/** [start, end) of each PEM block of `text`. */
function pemBlocks(text: string): [number, number][] {
  const blocks: [number, number][] = [];
  const re = /-----BEGIN [^-]+-----[\s\S]*?-----END [^-]+-----/g;
  for (let m = re.exec(text); m; m = re.exec(text)) blocks.push([m.index, m.index + m[0].length]);
  return blocks;
}

// ---------------------------------------------------------------------------------------------
// Programs

const FILES = ['tls.crt', 'tls.key'] as const;
type FileName = (typeof FILES)[number];

/** Where a file written in place is cut for a while: inside one of its PEM blocks, never between. */
interface Cut { block: number; at: number }

type Action =
  | { a: 'poll' } // gated: one poll, awaited (free-running: wait for one)
  | { a: 'pollAsync' } // gated: one poll, left running across what follows
  | { a: 'settle' } // the second poll from now, awaited
  | { a: 'connect'; post: boolean }
  | { a: 'hold' }
  | { a: 'useHeld' }
  | { a: 'stall' }
  | { a: 'sleep'; ms: number };

type Op =
  | { op: 'renew'; r: number; keyFirst: boolean; cutCrt: Cut | null; cutKey: Cut | null; rewriteSame: boolean }
  | { op: 'break'; file: FileName; how: 'missing' | 'directory' | 'garbage'; garbage: number; bytes: Uint8Array; restore: boolean };

interface Step { op: Op; gaps: Action[][] }

interface Program { layout: 'atomic' | 'in-place'; polls: 'gated' | 'free'; steps: Step[]; final: number }

const RENEWAL_COUNT = 8;
const GARBAGE_COUNT = 6;

const cutArb: fc.Arbitrary<Cut> = fc.record({
  block: fc.oneof(fc.constant(1), fc.nat(2)), // taken modulo the blocks of the file: after the leaf, mostly
  // near the start of a block (inside its BEGIN line), near its end, or anywhere
  at: fc.oneof(fc.integer({ min: 1, max: 30 }), fc.integer({ min: -30, max: -1 }), fc.integer({ min: 31, max: 4000 })),
});

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 7, arbitrary: fc.constant({ a: 'poll' as const }) },
  { weight: 3, arbitrary: fc.constant({ a: 'pollAsync' as const }) },
  { weight: 1, arbitrary: fc.constant({ a: 'settle' as const }) },
  { weight: 5, arbitrary: fc.boolean().map((post) => ({ a: 'connect' as const, post })) },
  { weight: 1, arbitrary: fc.constant({ a: 'hold' as const }) },
  { weight: 1, arbitrary: fc.constant({ a: 'useHeld' as const }) },
  { weight: 1, arbitrary: fc.constant({ a: 'stall' as const }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 4 }).map((ms) => ({ a: 'sleep' as const, ms })) },
);

// Chains (r3, r4, r7) are drawn as often as the rest: their cuts are the interesting ones.
const renewalArb = fc.oneof(fc.constantFrom(3, 4, 7), fc.nat(RENEWAL_COUNT - 1));

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant('renew' as const), r: renewalArb, keyFirst: fc.boolean(), cutCrt: fc.option(cutArb, { freq: 2 }), cutKey: fc.option(cutArb, { freq: 3 }), rewriteSame: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('break' as const), file: fc.constantFrom(...FILES), how: fc.constantFrom('missing' as const, 'directory' as const, 'garbage' as const), garbage: fc.nat(GARBAGE_COUNT - 1), bytes: fc.uint8Array({ minLength: 1, maxLength: 64 }), restore: fc.boolean() }) },
);

const programArb: fc.Arbitrary<Program> = fc.record({
  layout: fc.constantFrom('atomic' as const, 'in-place' as const),
  polls: fc.oneof({ weight: 3, arbitrary: fc.constant('gated' as const) }, { weight: 1, arbitrary: fc.constant('free' as const) }),
  steps: fc.array(fc.record({ op: opArb, gaps: fc.array(fc.array(actionArb, { maxLength: 2 }), { minLength: 4, maxLength: 4 }) }), { minLength: 1, maxLength: 6 }),
  final: fc.nat(RENEWAL_COUNT - 1),
});

// ---------------------------------------------------------------------------------------------
// The source's clock: polls released one at a time, or free-running

/**
 * A `Clock` whose `sleep` (the source's wait between polls) is counted and, when gated, lasts
 * until `release()`: a poll then happens exactly where the program says. Free-running, it sleeps
 * `ms` on a real timer.
 */
class PollClock implements Clock {
  sleeps = 0;
  #pending: (() => void) | undefined;
  #waiters: { count: number; resolve: () => void }[] = [];
  readonly gated: boolean;
  constructor(gated: boolean) {
    this.gated = gated;
  }

  now(): number { return Date.now(); }
  monotonic(): number { return performance.now(); }
  setTimer(ms: number, fn: () => void): Timer {
    const handle = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(handle) };
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.sleeps++;
    this.#waiters = this.#waiters.filter((w) => (w.count <= this.sleeps ? (w.resolve(), false) : true));
    return new Promise<void>((resolve, reject) => {
      let handle: NodeJS.Timeout | undefined;
      const onAbort = () => {
        clearTimeout(handle);
        this.#pending = undefined;
        reject(signal!.reason);
      };
      const done = () => {
        signal?.removeEventListener('abort', onAbort);
        this.#pending = undefined;
        resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (this.gated) this.#pending = done;
      else handle = setTimeout(done, ms);
    });
  }
  /** Resolves once `sleep` has been called `count` times. */
  sleepsReach(count: number): Promise<void> {
    if (this.sleeps >= count) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ count, resolve }));
  }
  /** Ends the source's wait (gated): it polls now. */
  release(): void {
    assert.ok(this.#pending, 'the source waits for its next poll');
    this.#pending();
  }
}

// ---------------------------------------------------------------------------------------------
// The model of the folder

/** What a file holds, as the source would read it: a renewal's file whole, or something else. */
type FileState = { r: number } | { bad: string };
const describe = (s: FileState) => ('r' in s ? `r${s.r}` : s.bad);

class Model {
  crt: FileState = { bad: 'missing' };
  key: FileState = { bad: 'missing' };
  /** The certificates (leaf fingerprints) the server may be serving now. */
  served = new Set<string>();
  /** `served` holds exactly what the server serves (it is known, not one of several). */
  known = false;
  /** What the source's last read found, when that read was exclusive (the folder unchanged during it). */
  #lastRead: string | undefined;
  #window: { crts: FileState[]; keys: FileState[] } | undefined;
  readonly renewals: Renewal[];
  constructor(renewals: Renewal[]) {
    this.renewals = renewals;
  }

  leafOf(crt: FileState, key: FileState): string | undefined {
    if (!('r' in crt) || !('r' in key)) return undefined;
    const c = this.renewals[crt.r]!;
    return c.keyId === this.renewals[key.r]!.keyId ? c.leaf : undefined;
  }
  set(file: FileName, state: FileState): void {
    if (file === 'tls.crt') this.crt = state;
    else this.key = state;
    this.#window?.crts.push(this.crt);
    this.#window?.keys.push(this.key);
  }
  /** A read may start now and last until `close()`. */
  open(): void {
    this.#window = { crts: [this.crt], keys: [this.key] };
  }
  /** The read is over; how many different states of the folder it may have seen. */
  close(): number {
    const candidates = this.candidates();
    for (const leaf of candidates) this.served.add(leaf);
    if (candidates.size) this.known = false;
    this.#lastRead = undefined; // what that read found, and so what the source holds as seen once, is not known
    const states = new Set(this.#window?.crts.map((c, i) => `${describe(c)} ${describe(this.#window!.keys[i]!)}`)).size;
    this.#window = undefined;
    return states;
  }
  /** An exclusive read is over (the folder did not change during it): `collapse` says what it found. */
  closeExclusive(): void {
    this.#window = undefined;
  }
  /**
   * Reads of the folder as it is now have completed, none other in flight: one (gated), or at
   * least two in a row (`reads: 2`, free-running). A new pair is served once two reads in a row
   * found it (certDirCertificates' settle rule): certainly after two such reads, perhaps after
   * one (a read the model cannot see, in flight before, may have found it too).
   */
  collapse(reads: 1 | 2): void {
    const now = `${describe(this.crt)} ${describe(this.key)}`;
    const leaf = this.leafOf(this.crt, this.key);
    const twice = reads === 2 || this.#lastRead === now;
    this.#lastRead = now;
    if (!leaf) return;
    if (twice) {
      this.served = new Set([leaf]);
      this.known = true;
    } else if (!this.served.has(leaf)) {
      this.served.add(leaf);
      this.known = false;
    }
  }
  candidates(): Set<string> {
    const out = new Set<string>();
    for (const c of this.#window?.crts ?? []) for (const k of this.#window?.keys ?? []) {
      const leaf = this.leafOf(c, k);
      if (leaf) out.add(leaf);
    }
    return out;
  }
  allowed(): Set<string> {
    return new Set([...this.served, ...this.candidates()]);
  }
}

// ---------------------------------------------------------------------------------------------
// Clients

const registry = toyBoxConversions();
const reviewBody = (uid: string) => JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid, desiredAPIVersion: 'toys.example.com/v2', objects: [] } });

/** A TLS connection past its handshake, with a reader for HTTP/1.1 answers framed by content-length. */
class Connection {
  #buf = Buffer.alloc(0);
  #wake: (() => void) | undefined;
  closed = false;
  error: string | undefined;
  readonly #closed: Promise<void>;
  readonly socket: TLSSocket;
  readonly leaf: string;
  constructor(socket: TLSSocket, leaf: string) {
    this.socket = socket;
    this.leaf = leaf;
    socket.on('data', (d: Buffer) => { this.#buf = Buffer.concat([this.#buf, d]); this.#wake?.(); });
    socket.on('error', (e: NodeJS.ErrnoException) => { this.error ??= `${e.code ?? 'error'}: ${e.message}`; });
    this.#closed = new Promise((resolve) => socket.once('close', () => { this.closed = true; this.#wake?.(); resolve(); }));
  }
  /** POSTs a review; the status, or what went wrong. */
  async post(uid: string): Promise<string> {
    const body = reviewBody(uid);
    this.socket.write(`POST /convert HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    const deadline = performance.now() + 3_000;
    for (;;) {
      const end = this.#buf.indexOf('\r\n\r\n');
      if (end >= 0) {
        const head = this.#buf.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? NaN);
        if (this.#buf.length >= end + 4 + length) {
          const text = this.#buf.subarray(end + 4, end + 4 + length).toString('utf8');
          this.#buf = this.#buf.subarray(end + 4 + length);
          const status = head.split(' ')[1] ?? '?';
          if (status !== '200') return `${status} ${text}`;
          return text === JSON.stringify(registry.review(JSON.parse(body))) ? '200' : `200 with another answer: ${text}`;
        }
      }
      if (this.closed) return `closed before the answer (${this.error ?? 'no error'})`;
      if (performance.now() > deadline) return 'no answer within 3 s';
      await new Promise<void>((r) => { this.#wake = r; setTimeout(r, 50); });
    }
  }
  closedWithin(ms: number): Promise<boolean> {
    return Promise.race([this.#closed.then(() => true), sleep(ms).then(() => false)]);
  }
}

function connect(port: number, ca: string[]): Promise<Connection | string> {
  return new Promise((resolve) => {
    const s = tlsConnect({ host: '127.0.0.1', port, ca });
    let done = false;
    const finish = (v: Connection | string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (typeof v === 'string') s.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => finish('the handshake did not complete within 3 s'), 3_000);
    s.once('secureConnect', () => finish(new Connection(s, s.getPeerCertificate().fingerprint256)));
    s.on('error', (e: NodeJS.ErrnoException) => finish(`handshake failed: ${e.code ?? 'error'}: ${e.message}`));
  });
}

// ---------------------------------------------------------------------------------------------
// One program against one server

/** What the programs made happen, over the whole run: each must happen (a generator gone blind fails). */
const stats = {
  programs: 0,
  'polls of a file cut short': 0,
  'polls of a chain cut after its leaf, the key matching': 0,
  'polls of a missing file, a directory or garbage': 0,
  'polls of a mismatched pair': 0,
  'polls before the first pair': 0,
  'reads across writes': 0, // a poll left running while the folder changed (gated)
  'swaps seen by new connections': 0,
  'handshakes checked': 0,
  'requests on connections held across a swap': 0,
  'stops with two or more connections open': 0,
};

type Entry = { kind: 'file'; bytes: Buffer; state: FileState } | { kind: 'directory' } | { kind: 'missing' };
const stateOfEntry = (e: Entry | undefined): FileState => (!e || e.kind === 'missing' ? { bad: 'missing' } : e.kind === 'directory' ? { bad: 'a directory' } : e.state);

async function runProgram(pki: Pki, program: Program): Promise<void> {
  const { renewals, roots } = pki;
  const dir = await mkdtemp(join(tmpdir(), 'converge-cert-rotation-'));
  const trace: string[] = [];
  const log = (line: string) => void trace.push(line);
  const model = new Model(renewals);
  const gated = program.polls === 'gated';
  const clock = new PollClock(gated);
  const stop = new AbortController();
  const held: Connection[] = [];
  const stalled: Socket[] = [];
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => void rejections.push(reason);
  process.on('unhandledRejection', onRejection);
  const fail = (message: string): never => assert.fail(`${message}\n--- trace (${program.layout}, ${program.polls} polls) ---\n${trace.slice(-80).join('\n')}`);
  const garbage = (file: FileName, i: number, bytes: Uint8Array): Buffer => [
    Buffer.from('not a certificate\n'),
    Buffer.from(`-----BEGIN ${file === 'tls.crt' ? 'CERTIFICATE' : 'PRIVATE KEY'}-----\nAAAA\n-----END ${file === 'tls.crt' ? 'CERTIFICATE' : 'PRIVATE KEY'}-----\n`),
    Buffer.alloc(0),
    Buffer.from(file === 'tls.crt' ? renewals[0]!.keyPem : renewals[0]!.certPem), // the two files swapped
    Buffer.from(bytes),
    Buffer.from(`${(file === 'tls.crt' ? renewals[3]!.certPem : renewals[3]!.keyPem).slice(0, 200)}`), // cut short, never completed
  ][i]!;
  const fileEntry = (file: FileName, r: number): Entry => ({ kind: 'file', bytes: Buffer.from(file === 'tls.crt' ? renewals[r]!.certPem : renewals[r]!.keyPem), state: { r } });

  // --- the server
  let started: string | undefined;
  let port: number | undefined;
  const server = new WebhookServer({ bindAddress: '127.0.0.1:0', certificates: certDirCertificates(dir, { pollMs: POLL_MS, clock }) }).serveConversion(registry);
  const running = server.start(stop.signal).then(() => void (started = 'resolved'), (e: unknown) => void (started = `rejected: ${e instanceof Error ? e.message : String(e)}`));
  void server.listening().then((a) => void (port = a?.port), () => undefined);
  // The source reads the folder at once: a poll in flight from the start.
  model.open();
  let inflight: number | undefined = gated ? 1 : undefined;

  // --- polls
  const closeInflight = async () => {
    if (inflight === undefined) return;
    await within(clock.sleepsReach(inflight), 3_000, 'the poll in flight completes');
    inflight = undefined;
    if (model.close() > 1) stats['reads across writes']++;
  };
  const afterPoll = async () => {
    // A pair served for certain (two reads in a row found it, no write since) makes the server listen.
    if (port === undefined && model.known && model.served.size > 0) {
      const address = await within(server.listening(), 3_000, 'listening() once a complete pair was read').catch((e: unknown) => fail(`${String(e)} (start(): ${started ?? 'running'})`));
      port = address?.port;
      log(`  listening on ${port}`);
    }
  };
  const exclusivePoll = async () => {
    if (gated) {
      await closeInflight();
      model.open();
      const target = clock.sleeps + 1;
      clock.release();
      await within(clock.sleepsReach(target), 3_000, 'a poll completes');
    } else {
      model.close();
      model.open();
      // Three sleeps: the two reads between them began and ended in this window.
      await within(clock.sleepsReach(clock.sleeps + 3), 3_000, 'two whole polls complete');
    }
    if (!gated) model.close();
    else model.closeExclusive();
    const leaf = model.leafOf(model.crt, model.key);
    const states = [model.crt, model.key].map(describe);
    if (states.some((d) => d.startsWith('cut'))) stats['polls of a file cut short']++;
    if (/^cut .* block [1-9]/.test(describe(model.crt)) && 'r' in model.key) stats['polls of a chain cut after its leaf, the key matching'] += Number(renewals[Number(/\(r(\d)\)/.exec(describe(model.crt))![1])]!.keyId === renewals[model.key.r]!.keyId);
    if (states.some((d) => d === 'missing' || d === 'a directory' || d.startsWith('garbage'))) stats['polls of a missing file, a directory or garbage']++;
    if ('r' in model.crt && 'r' in model.key && !leaf) stats['polls of a mismatched pair']++;
    if (port === undefined && !leaf) stats['polls before the first pair']++;
    model.collapse(gated ? 1 : 2);
    if (!gated) model.open();
    log(`  polled: serves ${[...model.served].map(nameOf).join(' | ') || 'nothing'}`);
    await afterPoll();
  };
  const nameOf = (leaf: string) => renewals.find((r) => r.leaf === leaf)?.name.split(' ')[0] ?? leaf;

  // --- checks made before every action
  const check = () => {
    if (started !== undefined) fail(`start() settled before the abort: ${started}`);
    if (port !== undefined) {
      if (!server.ready().ok) fail(`ready() is false after the first certificate: ${server.ready().detail}`);
      if (model.allowed().size === 0) fail('listening before the folder ever held a complete, matching pair');
    }
  };

  const expectServed = (leaf: string, what: string) => {
    const allowed = model.allowed();
    if (!allowed.has(leaf)) fail(`${what} presented ${nameOf(leaf)}, allowed: ${[...allowed].map(nameOf).join(' | ') || 'none'} (folder: tls.crt ${describe(model.crt)}, tls.key ${describe(model.key)})`);
  };

  let uids = 0;
  let lastSeen: string | undefined;
  const act = async (action: Action) => {
    check();
    switch (action.a) {
      case 'poll':
        if (gated) await exclusivePoll();
        else await within(clock.sleepsReach(clock.sleeps + 1), 3_000, 'a poll');
        return;
      case 'pollAsync':
        if (!gated) return;
        await closeInflight();
        model.open();
        inflight = clock.sleeps + 1;
        clock.release();
        log('  poll started');
        return;
      case 'settle':
        await exclusivePoll();
        return;
      case 'sleep':
        await sleep(action.ms);
        return;
      case 'connect':
      case 'hold': {
        if (port === undefined) return;
        const c = await connect(port, roots);
        if (typeof c === 'string') return fail(`a client trusting both roots: ${c} (allowed: ${[...model.allowed()].map(nameOf).join(' | ')}; folder: tls.crt ${describe(model.crt)}, tls.key ${describe(model.key)})`);
        log(`  ${action.a}: ${nameOf(c.leaf)}`);
        expectServed(c.leaf, `a new connection`);
        stats['handshakes checked']++;
        if (lastSeen !== undefined && lastSeen !== c.leaf) stats['swaps seen by new connections']++;
        lastSeen = c.leaf;
        if (action.a === 'hold') return void held.push(c);
        if (action.post) {
          const status = await c.post(`short-${uids++}`);
          if (status !== '200') fail(`a request on a new connection: ${status}`);
        }
        c.socket.destroy();
        return;
      }
      case 'useHeld':
        for (const c of held) {
          const status = await c.post(`held-${uids++}`);
          if (status !== '200') fail(`a connection held since ${nameOf(c.leaf)} was served: ${status}`);
          if (lastSeen !== c.leaf) stats['requests on connections held across a swap']++;
        }
        if (held.length) log(`  ${held.length} held connection(s) answered`);
        return;
      case 'stall': {
        if (port === undefined) return;
        const s = netConnect(port, '127.0.0.1');
        s.on('error', () => undefined);
        stalled.push(s);
        return;
      }
    }
  };
  const gap = (step: Step, i: number) => async () => {
    for (const action of step.gaps[i % step.gaps.length] ?? []) await act(action);
  };

  // --- the writers
  const entries: Record<FileName, Entry> = { 'tls.crt': { kind: 'missing' }, 'tls.key': { kind: 'missing' } };

  /** In place: `entry` at `file`, cut at `cut` for the length of `between` when it is a file. */
  const place = async (file: FileName, entry: Entry, cut: Cut | null, between: () => Promise<void>) => {
    const path = join(dir, file);
    if (entries[file].kind === 'directory') {
      await rm(path, { recursive: true });
      entries[file] = { kind: 'missing' };
      model.set(file, { bad: 'missing' });
    }
    if (entry.kind === 'missing') {
      if (entries[file].kind !== 'missing') await unlink(path);
    } else if (entry.kind === 'directory') {
      if (entries[file].kind !== 'missing') await unlink(path);
      model.set(file, { bad: 'missing' });
      await mkdir(path);
    } else {
      const fd = await open(path, 'w');
      try {
        model.set(file, { bad: 'empty (being written)' });
        const blocks = pemBlocks(entry.bytes.toString('latin1'));
        const block = cut && blocks.length ? blocks[cut.block % blocks.length]! : undefined;
        if (cut && block) {
          const length = block[1] - block[0];
          const at = block[0] + (cut.at < 0 ? length + cut.at : cut.at <= 30 ? cut.at : 1 + (cut.at % (length - 1)));
          await fd.write(entry.bytes.subarray(0, at));
          model.set(file, { bad: `cut at ${at} of ${entry.bytes.length}, block ${blocks.indexOf(block)}${'r' in entry.state ? ` (r${entry.state.r})` : ''}` });
          log(`${file}: cut at ${at} of ${entry.bytes.length} (block ${blocks.indexOf(block)})`);
          await between();
          await fd.write(entry.bytes.subarray(at));
        } else {
          await fd.write(entry.bytes);
        }
      } finally {
        await fd.close();
      }
    }
    entries[file] = entry;
    model.set(file, stateOfEntry(entry));
    log(`${file}: ${describe(stateOfEntry(entry))}`);
  };

  // AtomicWriter: payloads in timestamped folders, `..data` swapped by a rename.
  let current: { name: string; payload: Partial<Record<FileName, Entry>> } | undefined;
  const links = new Set<FileName>();
  let sequence = 0;
  const visible = () => {
    for (const file of FILES) model.set(file, links.has(file) && current ? stateOfEntry(current.payload[file]) : { bad: 'missing' });
  };
  const publish = async (payload: Partial<Record<FileName, Entry>>, between: (i: number) => Promise<void>) => {
    const name = `..2026_03_14_09_26_53.${String(++sequence).padStart(9, '0')}`;
    await mkdir(join(dir, name));
    for (const [file, entry] of Object.entries(payload) as [FileName, Entry][]) {
      if (entry.kind === 'file') await writeFile(join(dir, name, file), entry.bytes);
      else if (entry.kind === 'directory') await mkdir(join(dir, name, file));
    }
    await between(0);
    await symlink(name, join(dir, '..data_tmp'));
    await rename(join(dir, '..data_tmp'), join(dir, '..data'));
    const old = current;
    current = { name, payload };
    visible();
    log(`..data -> ${name}: tls.crt ${describe(stateOfEntry(payload['tls.crt']))}, tls.key ${describe(stateOfEntry(payload['tls.key']))}`);
    await between(1);
    for (const file of FILES) {
      const inPayload = payload[file] !== undefined && payload[file].kind !== 'missing';
      if (inPayload && !links.has(file)) {
        await symlink(`..data/${file}`, join(dir, file));
        links.add(file);
        visible();
      } else if (!inPayload && links.has(file)) {
        await unlink(join(dir, file));
        links.delete(file);
        visible();
      }
    }
    await between(2);
    if (old) await rm(join(dir, old.name), { recursive: true });
  };

  const runOp = async (step: Step) => {
    const { op } = step;
    const between = (i: number) => gap(step, i)();
    if (op.op === 'renew') {
      log(`renew r${op.r} (${renewals[op.r]!.name})${program.layout === 'in-place' ? `, ${op.keyFirst ? 'key' : 'certificate'} first` : ''}`);
      if (program.layout === 'atomic') {
        await publish({ 'tls.crt': fileEntry('tls.crt', op.r), 'tls.key': fileEntry('tls.key', op.r) }, between);
        return between(3);
      }
      const order: FileName[] = op.keyFirst ? ['tls.key', 'tls.crt'] : ['tls.crt', 'tls.key'];
      let i = 0;
      for (const file of order) {
        const entry = fileEntry(file, op.r);
        const now = entries[file];
        if (!op.rewriteSame && now.kind === 'file' && now.bytes.equals((entry as { bytes: Buffer }).bytes)) continue;
        await place(file, entry, file === 'tls.crt' ? op.cutCrt : op.cutKey, () => between(i++));
        await between(i++);
      }
      return;
    }
    const broken: Entry = op.how === 'missing' ? { kind: 'missing' } : op.how === 'directory' ? { kind: 'directory' } : { kind: 'file', bytes: garbage(op.file, op.garbage, op.bytes), state: { bad: `garbage ${op.garbage}` } };
    log(`break ${op.file}: ${op.how}${op.how === 'garbage' ? ` ${op.garbage}` : ''}${op.restore ? ', then restore' : ''}`);
    if (program.layout === 'atomic') {
      const before = current?.payload ?? {};
      await publish({ ...before, [op.file]: broken }, between);
      if (op.restore) await publish(before, (i) => between(i + 2));
      return;
    }
    const before = entries[op.file];
    await place(op.file, broken, null, () => between(0));
    await between(1);
    if (op.restore) {
      await place(op.file, before, null, () => between(2));
      await between(3);
    }
  };

  try {
    for (const step of program.steps) await runOp(step);
    // Finally a whole, matching pair that stays: served once two polls in a row read it.
    const last = renewals[program.final]!;
    log(`final renewal r${program.final} (${last.name})`);
    if (program.layout === 'atomic') await publish({ 'tls.crt': fileEntry('tls.crt', program.final), 'tls.key': fileEntry('tls.key', program.final) }, async () => undefined);
    else for (const file of FILES) await place(file, fileEntry(file, program.final), null, async () => undefined);
    check();
    await exclusivePoll();
    await exclusivePoll();
    check();
    assert.ok(port !== undefined);
    const c = await connect(port, roots);
    if (typeof c === 'string') fail(`a client after the final renewal: ${c}`);
    else {
      if (c.leaf !== last.leaf) fail(`two polls after the final renewal, a new connection presented ${nameOf(c.leaf)}, not ${nameOf(last.leaf)}`);
      held.push(c);
    }
    for (const h of held) {
      const status = await h.post(`end-${uids++}`);
      if (status !== '200') fail(`a connection held since ${nameOf(h.leaf)} was served, after the final renewal: ${status}`);
      if (h.leaf !== last.leaf) stats['requests on connections held across a swap']++;
    }
    if (held.length > 1) stats['stops with two or more connections open']++;
    stats.programs++;
    const s = netConnect(port, '127.0.0.1');
    s.on('error', () => undefined);
    stalled.push(s);
    // Stop with all of them open.
    stop.abort();
    const settled = await Promise.race([running.then(() => started), sleep(2_000).then(() => 'still running')]);
    if (settled !== 'resolved') fail(`start() within 2 s of the abort: ${settled}`);
    for (const h of held) if (!(await h.closedWithin(2_000))) fail('a held connection is still open 2 s after the stop');
    for (const t of stalled) {
      if (!t.destroyed && !(await Promise.race([new Promise<boolean>((r) => t.once('close', () => r(true))), sleep(2_000).then(() => t.destroyed)]))) fail('a connection that never handshook is still open 2 s after the stop');
    }
    await sleep(0);
    if (rejections.length) fail(`unhandled rejection: ${rejections.map(String).join('; ')}`);
  } finally {
    stop.abort();
    for (const h of held) h.socket.destroy();
    for (const t of stalled) t.destroy();
    await Promise.race([running, sleep(3_000)]);
    process.off('unhandledRejection', onRejection);
    await rm(dir, { recursive: true, force: true });
  }
}

test('property: certificate rotation under random writers, polls and clients: only whole matching pairs are served, each by the second poll; held connections keep working; stop settles', { timeout: LONG ? 1_800_000 : 300_000 }, async (t) => {
  const pki = await makePki();
  await fc.assert(fc.asyncProperty(programArb, (program) => runProgram(pki, program)), { numRuns: RUNS });
  t.diagnostic(JSON.stringify(stats));
  for (const [what, count] of Object.entries(stats)) assert.ok(count > 0, `the programs never made this happen: ${what} (${JSON.stringify(stats)})`);
});
