/**
 * Serving certificates for the webhook server (and the metrics server's HTTPS), from one of two sources:
 *
 * - `certDirCertificates(dir)`: `tls.crt` and `tls.key` in a folder, the layout cert-manager (and
 *   a mounted `kubernetes.io/tls` Secret) gives; re-read when the files change, so a renewed
 *   certificate is served without a restart.
 * - `selfManagedCertificates(...)`: a CA this operator makes and keeps in a `CaStore` (a folder
 *   for local runs, a Secret in the cluster, so every replica shares one CA; or `memoryCaStore()`,
 *   this process only: a self-signed certificate, as the metrics server's HTTPS uses without a
 *   folder), and a serving certificate per process signed by it for the given DNS names and IPs,
 *   renewed before expiry. The CA is what goes into the CRDs' `caBundle` (`injectCaBundle`).
 *
 * Guarantees: `start(signal, onCertificate)` calls `onCertificate` with a complete certificate as
 * soon as it has one (a folder: once two reads `settleMs` apart agree; self-managed: once issued),
 * then again after each change, until the signal aborts. A folder that is missing or half-written (a file cut short, a chain in tls.crt cut inside
 * one of its blocks, or a key that does not match the certificate yet) is retried, never served;
 * so is a pair TLS refuses. Self-managed keys are ECDSA P-256 (a folder may hold any key TLS takes).
 * A tls.crt cut exactly between two blocks (the leaf alone, its chain not written yet) is a whole
 * pair to any check, so a new pair is served only once two reads `settleMs` apart found it alike.
 * Caveat: a writer that pauses longer than that between the blocks of one file can still have its
 * leaf served alone until the next poll; a mounted Secret (the kubelet swaps the whole folder at
 * once) cannot.
 * Caveat: the X.509 library (`@peculiar/x509`) is loaded only by the self-managed source.
 * @module
 */
import { readFile, mkdir, writeFile, link, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { isIP } from 'node:net';
import { X509Certificate, createPrivateKey, randomBytes } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import type { Clock } from '../clock/index.ts';
import { systemClock } from '../clock/index.ts';
import type { KubeClient } from '../client/index.ts';
import { ApiError, isAlreadyExists, isConflict, isNotFound } from '../client/index.ts';
import { SecretKind } from '../objects/index.ts';

export interface ServingCertificate {
  certPem: string;
  keyPem: string;
  /** The CA that signed it, when known (self-managed). */
  caPem?: string;
  /** Expiry, ms since the epoch. */
  notAfter: number;
}

export interface CertificateSource {
  start(signal: AbortSignal, onCertificate: (cert: ServingCertificate) => void): Promise<void>;
  /**
   * A client refused the certificate served (it trusts another CA now): look at the source
   * again soon rather than at the next scheduled check. Optional; cheap to call often (a source
   * bounds how often it acts on it).
   */
  recheck?(): void;
}

/** The shortest time between two rechecks a refusal asks for (a refusing client retries often). */
const RECHECK_MIN_MS = 5_000;

const DAY_MS = 86_400_000;

/**
 * Certificates from `dir/tls.crt` and `dir/tls.key`, polled every `pollMs` (default 5 s). A new
 * pair is served once two reads `settleMs` apart (default 200 ms) found it alike: a file written
 * in place, block by block, is not taken in the middle.
 */
export function certDirCertificates(dir: string, options: { pollMs?: number; settleMs?: number; clock?: Clock } = {}): CertificateSource {
  const clock = options.clock ?? systemClock;
  const pollMs = options.pollMs ?? 5_000;
  const settleMs = options.settleMs ?? Math.min(200, pollMs);
  return {
    async start(signal, onCertificate) {
      let last = '';
      let seenOnce = ''; // a new pair read once: served if the next read finds it alike
      while (!signal.aborted) {
        let wait = pollMs;
        try {
          const [certPem, keyPem] = await Promise.all([readFile(join(dir, 'tls.crt'), 'utf8'), readFile(join(dir, 'tls.key'), 'utf8')]);
          const fingerprint = `${certPem}\n${keyPem}`;
          if (fingerprint !== last && fingerprint !== seenOnce) {
            // A tls.crt cut between two PEM blocks (the leaf whole, its chain still to come) is a
            // complete pair to any check: only a second read can tell it was still being written.
            seenOnce = fingerprint;
            wait = settleMs;
          } else if (fingerprint !== last) {
            const leaf = new X509Certificate(certPem); // throws on a half-written file: retried at the next poll
            // A half-renewed folder (one file new, the other still old) is retried too, never served.
            if (!leaf.checkPrivateKey(createPrivateKey(keyPem))) throw new Error('tls.key does not match tls.crt');
            // So is a chain cut short (tls.crt written in place, the leaf whole and the next block
            // not yet): TLS refuses one cut inside a block, and would ignore one cut inside its
            // BEGIN line, serving the leaf without its chain.
            if (/-----END [^\n]*-----\s*-[-A-Z ]*$/.test(certPem)) throw new Error('tls.crt ends inside a BEGIN line');
            createSecureContext({ cert: certPem, key: keyPem });
            onCertificate({ certPem, keyPem, notAfter: leaf.validToDate.getTime() });
            last = fingerprint; // a pair the server refused (the callback threw) is tried again
          }
        } catch {
          // missing or incomplete: keep serving the previous certificate, look again soon
        }
        await clock.sleep(wait, signal).catch(() => undefined);
      }
    },
  };
}

/** Where the self-managed CA lives. `load` returns undefined when there is none yet. */
export interface CaStore {
  /** The stored CA, if any; a store that asks over the network gives up when `signal` aborts. */
  load(signal?: AbortSignal): Promise<{ certPem: string; keyPem: string } | undefined>;
  /** Saves a new CA unless one exists already; returns the one that is stored (ours or theirs). */
  saveIfAbsent(ca: { certPem: string; keyPem: string }, signal?: AbortSignal): Promise<{ certPem: string; keyPem: string }>;
}

/**
 * The CA in a folder (`ca.crt`, `ca.key`), shared by the processes that use the same folder. Each
 * file appears whole; of processes creating the CA at once, one wins; a key left without its
 * certificate (a process killed between the two writes) is completed with a certificate for it.
 */
export function directoryCaStore(dir: string): CaStore {
  const certPath = join(dir, 'ca.crt');
  const keyPath = join(dir, 'ca.key');
  const load = async () => {
    try {
      const [certPem, keyPem] = await Promise.all([readFile(certPath, 'utf8'), readFile(keyPath, 'utf8')]);
      return { certPem, keyPem };
    } catch {
      return undefined;
    }
  };
  return {
    load,
    async saveIfAbsent(ca) {
      await mkdir(dir, { recursive: true });
      // The key first, the certificate last, each published whole and only if absent (of two
      // processes racing, one wins): a reader that finds ca.crt finds a complete pair.
      if (await publishIfAbsent(keyPath, ca.keyPem, 0o600)) {
        if (await publishIfAbsent(certPath, ca.certPem, 0o644)) return ca;
        return (await load())!; // completed meanwhile by another process (below): for our key
      }
      for (let i = 0; i < 50; i++) {
        const stored = await load();
        if (stored) return stored;
        await new Promise((r) => setTimeout(r, 20));
      }
      // A key and no certificate: its writer was killed between the two writes (or is very slow).
      // Nobody can have used that key (a pair is used only once its certificate is there), and a
      // CA certificate can be made for it: complete the pair instead of failing every start.
      const keyPem = await readFile(keyPath, 'utf8');
      let certPem: string;
      try {
        certPem = await (await loadX509()).caCertificateFor(keyPem);
      } catch (err) {
        throw new Error(`${keyPath} holds no usable key and ${certPath} is missing (${err instanceof Error ? err.message : String(err)}): remove the folder ${dir} to start with a new CA`);
      }
      await publishIfAbsent(certPath, certPem, 0o644);
      return (await load())!; // ours, or one published meanwhile for the same key
    },
  };
}

/**
 * The CA in this process's memory only: made at the first start, gone when the process exits,
 * shared with no other process. With `selfManagedCertificates`, a self-signed serving certificate
 * made in memory at start, as controller-runtime's metrics server makes one when given no
 * certificate: for clients that verify no certificate (a scraper's `insecureSkipVerify`).
 */
export function memoryCaStore(): CaStore {
  let stored: { certPem: string; keyPem: string } | undefined;
  return {
    load: async () => stored,
    saveIfAbsent: async (ca) => (stored ??= ca),
  };
}

/**
 * Writes `content` to `path` whole (a temporary file, then a hard link: atomic, and refused when
 * `path` exists); false when it existed.
 */
async function publishIfAbsent(path: string, content: string, mode: number): Promise<boolean> {
  const temporary = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  await writeFile(temporary, content, { mode, flag: 'wx' });
  try {
    await link(temporary, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

/**
 * The CA in a Secret (`ca.crt`, `ca.key`), shared by every replica. The Secret may be installed
 * empty (as `deploy/` does), so that the operator needs only `get` and `update` on that one name;
 * when it does not exist it is created (which needs `create` on Secrets). Of two replicas saving at
 * once, one wins (the other's update conflicts, and it takes the stored CA).
 */
export function secretCaStore(client: KubeClient, namespace: string, name: string): CaStore {
  const key = { namespace, name };
  const read = async (signal?: AbortSignal) => {
    try {
      return await client.get(SecretKind, key, signal ? { signal } : {});
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
  const caOf = (secret: Awaited<ReturnType<typeof read>>) => {
    const crt = secret?.data?.['ca.crt'];
    const k = secret?.data?.['ca.key'];
    return crt && k ? { certPem: Buffer.from(crt, 'base64').toString('utf8'), keyPem: Buffer.from(k, 'base64').toString('utf8') } : undefined;
  };
  return {
    load: async (signal) => caOf(await read(signal)),
    async saveIfAbsent(ca, signal) {
      const data = { 'ca.crt': Buffer.from(ca.certPem).toString('base64'), 'ca.key': Buffer.from(ca.keyPem).toString('base64') };
      for (let attempt = 0; attempt < 5; attempt++) {
        const existing = await read(signal);
        const stored = caOf(existing);
        if (stored) return stored;
        const options = signal ? { signal } : {};
        try {
          if (existing) await client.replace(SecretKind, { ...existing, data: { ...existing.data, ...data } }, options);
          else await client.create(SecretKind, { metadata: { name, namespace, labels: { 'app.kubernetes.io/managed-by': 'converge', 'app.kubernetes.io/component': 'webhook-ca' } }, type: 'Opaque', data }, options);
          return ca;
        } catch (err) {
          if (!isAlreadyExists(err) && !isConflict(err)) throw err; // someone else saved one: read it
        }
      }
      throw new Error(`Secret ${namespace}/${name}: could not store or read the webhook CA`);
    },
  };
}

export interface SelfManagedOptions {
  store: CaStore;
  /** Names the serving certificate is valid for (default `localhost`, `127.0.0.1`, `::1`). */
  hosts?: string[];
  /** Serving certificate lifetime (default 90 days); renewed when a third of it is left. */
  validityMs?: number;
  /** How often the store is read again for the CA it holds now (default 60 s). */
  caCheckMs?: number;
  /**
   * The first wait after a failed first read of the store (default 1 s; doubles up to 30 s): the
   * store is read again until it answers or the source stops.
   */
  retryMs?: number;
  /** Told (once per start) when the first read of the store fails and is retried. */
  log?: { warn(fields: object, message: string): void };
  clock?: Clock;
}

/**
 * The store's CA at start, read again with backoff while the read fails (an API server restarting
 * or an etcd leader change during a rollout answers 503 or resets the connection: one such answer
 * failed the webhook, and with it the manager); `undefined` once `signal` aborts.
 */
async function firstRead<T>(options: SelfManagedOptions, clock: Clock, signal: AbortSignal, read: () => Promise<T>): Promise<T | undefined> {
  let waitMs = options.retryMs ?? 1_000;
  for (let attempt = 0; ; attempt++) {
    if (signal.aborted) return undefined;
    try {
      return await read();
    } catch (err) {
      if (signal.aborted) return undefined;
      if (!mayPass(err)) throw err; // RBAC, a missing namespace, a folder it may not write: a person acts
      if (attempt === 0) options.log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'cannot read or store the webhook CA yet; retrying with backoff');
    }
    await clock.sleep(waitMs, signal).catch(() => undefined);
    waitMs = Math.min(30_000, waitMs * 2);
  }
}

/**
 * Whether a failure to read or store the CA may pass by itself: an API server error (5xx), a 429,
 * a timeout, a connection that failed. Not a refusal (401, 403, 404, 422 …) nor a folder the
 * process may not write: the webhook then fails, and the process with it, saying why.
 */
function mayPass(err: unknown): boolean {
  if (err instanceof ApiError) return err.code >= 500 || err.code === 429 || err.code === 408;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return !(code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'ENOTDIR' || code === 'EISDIR');
}

/**
 * The CA of a self-managed store, made and saved now if the store has none: what a local setup
 * puts into the CRDs' `caBundle` before the webhook's first start. Returns its PEM.
 */
export async function ensureSelfManagedCa(store: CaStore): Promise<string> {
  const existing = await store.load();
  if (existing) return existing.certPem;
  const x509 = await loadX509();
  return (await store.saveIfAbsent(await x509.createCa())).certPem;
}

/**
 * A self-managed CA (made once, shared through the store) and per-process serving certificates.
 *
 * Every `caCheckMs` the store is read again, so that the replicas keep agreeing on one CA (the one
 * the CRDs' `caBundle` holds, `CaBundleInjector`): a CA found there that is not this process's
 * (its Secret was deleted and a replica that started since made another, or someone replaced it)
 * is followed — a serving certificate from it is issued at once; a store that lost its CA gets
 * this process's back (`saveIfAbsent`, so of replicas doing it at once one wins and the others
 * follow it); a CA that cannot issue (garbage) and a store that cannot be read are not followed.
 * A client that refuses the certificate (the API server, once the CRDs' `caBundle` holds another
 * CA: `recheck`) makes the store be read at once (at most every 5 s), so a replica follows at its
 * first refused request. A first read of the store that fails in a way that may pass (the API
 * server restarting: a 5xx, a 429, a connection reset) is retried with backoff (`retryMs`, up to
 * 30 s) until it answers or the source stops, said once through `log`: the webhook waits (and
 * `/readyz` with it) rather than fails. A refusal (RBAC's 403, a 404) still fails `start`.
 * Caveat: a replica that gets no request follows within `caCheckMs`.
 */
export function selfManagedCertificates(options: SelfManagedOptions): CertificateSource {
  const clock = options.clock ?? systemClock;
  const validity = options.validityMs ?? 90 * DAY_MS;
  const caCheckMs = options.caCheckMs ?? 60_000;
  const hosts = options.hosts ?? ['localhost', '127.0.0.1', '::1'];
  let wake: (() => void) | undefined;
  let lastRecheck = Number.NEGATIVE_INFINITY;
  return {
    recheck() {
      const now = clock.monotonic();
      if (!wake || now - lastRecheck < RECHECK_MIN_MS) return;
      lastRecheck = now;
      wake();
    },
    async start(signal, onCertificate) {
      const x509 = await loadX509();
      const firstCa = await firstRead(options, clock, signal, async () => (await options.store.load(signal)) ?? (await options.store.saveIfAbsent(await x509.createCa(), signal)));
      if (!firstCa) return; // stopped before the store answered
      let caPair = firstCa;
      let renewAt = 0;
      while (!signal.aborted) {
        if (Date.now() >= renewAt) {
          const cert = await x509.issue(caPair, hosts, validity);
          onCertificate(cert);
          renewAt = cert.notAfter - validity / 3;
        }
        // Wake at least every 6 h (timers cannot wait for weeks; the wall clock may jump), and
        // every caCheckMs to look at the store.
        const nap = new AbortController(); // ended early by recheck()
        wake = () => nap.abort();
        await clock.sleep(Math.min(Math.max(60_000, renewAt - Date.now()), 6 * 3_600_000, caCheckMs), AbortSignal.any([signal, nap.signal])).catch(() => undefined);
        wake = undefined;
        if (signal.aborted) break;
        try {
          const stored = (await options.store.load(signal)) ?? (await options.store.saveIfAbsent(caPair, signal));
          if (stored.certPem !== caPair.certPem || stored.keyPem !== caPair.keyPem) {
            const cert = await x509.issue(stored, hosts, validity); // throws for a CA that cannot issue
            onCertificate(cert);
            caPair = stored;
            renewAt = cert.notAfter - validity / 3;
          }
        } catch {
          // the store unreadable, or its CA unusable: keep serving from the CA in use
        }
      }
    },
  };
}

interface X509Helpers {
  createCa(): Promise<{ certPem: string; keyPem: string }>;
  /** A CA certificate (PEM) for the CA key `keyPem` (PKCS#8, P-256). */
  caCertificateFor(keyPem: string): Promise<string>;
  issue(ca: { certPem: string; keyPem: string }, hosts: string[], validityMs: number): Promise<ServingCertificate>;
}

async function loadX509(): Promise<X509Helpers> {
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
  const pem = (label: string, der: ArrayBuffer) => {
    const b64 = Buffer.from(der).toString('base64').replace(/.{64}/g, '$&\n');
    return `-----BEGIN ${label}-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END ${label}-----\n`;
  };
  const der = (text: string) => Buffer.from(text.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  const serial = () => {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    bytes[0] = bytes[0]! & 0x7f;
    return Buffer.from(bytes).toString('hex');
  };
  /** A self-signed CA certificate (PEM) for `keys`, valid ten years. */
  const caCertificate = async (keys: Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[0]['keys']): Promise<string> => {
    const now = Date.now();
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: serial(),
      name: 'CN=Converge webhook CA, O=Converge',
      notBefore: new Date(now - 60_000),
      notAfter: new Date(now + 3650 * DAY_MS),
      keys,
      signingAlgorithm: ALG,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ],
    });
    return `${cert.toString('pem')}\n`;
  };
  return {
    async createCa() {
      const keys = await crypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
      return { certPem: await caCertificate(keys), keyPem: pem('PRIVATE KEY', await crypto.subtle.exportKey('pkcs8', keys.privateKey)) };
    },
    async caCertificateFor(keyPem) {
      const privateKey = await crypto.subtle.importKey('pkcs8', der(keyPem), ALG, true, ['sign']);
      const { kty, crv, x, y } = await crypto.subtle.exportKey('jwk', privateKey);
      const publicKey = await crypto.subtle.importKey('jwk', { kty, crv, x, y, ext: true }, ALG, true, ['verify']);
      return caCertificate({ privateKey, publicKey } as Parameters<typeof caCertificate>[0]);
    },
    async issue(ca, hosts, validityMs) {
      const caCert = new x509.X509Certificate(ca.certPem);
      const caKey = await crypto.subtle.importKey('pkcs8', der(ca.keyPem), ALG, false, ['sign']);
      const keys = await crypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
      const now = Date.now();
      const names: { type: 'dns' | 'ip'; value: string }[] = hosts.map((h) => ({ type: isIP(h) ? 'ip' : 'dns', value: h }));
      const cert = await x509.X509CertificateGenerator.create({
        serialNumber: serial(),
        subject: `CN=${hosts[0] ?? 'converge-webhook'}, O=Converge`,
        issuer: caCert.subject,
        notBefore: new Date(now - 60_000),
        notAfter: new Date(now + validityMs),
        signingKey: caKey,
        publicKey: keys.publicKey,
        signingAlgorithm: ALG,
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
          new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
          new x509.SubjectAlternativeNameExtension(names),
          await x509.AuthorityKeyIdentifierExtension.create(caCert),
        ],
      });
      return {
        certPem: `${cert.toString('pem')}\n`,
        keyPem: pem('PRIVATE KEY', await crypto.subtle.exportKey('pkcs8', keys.privateKey)),
        caPem: ca.certPem,
        notAfter: now + validityMs,
      };
    },
  };
}
