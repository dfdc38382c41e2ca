/**
 * The simulator's TLS material: a self-signed CA (kept in `dir` and reused across restarts, so a
 * client configured with its CA file keeps trusting a restarted simulator) and a server
 * certificate signed by it for loopback names. Every file is written whole (a temporary file, then a
 * rename), and a CA the folder holds only in part is replaced, so a kill at any point never leaves
 * a folder the next start cannot use. Two simulators starting at once on one empty folder may
 * each make a CA; give each its own folder.
 *
 * Uses `@peculiar/x509` over WebCrypto (ECDSA P-256); that library needs the `reflect-metadata`
 * polyfill, imported here and nowhere else.
 *
 * @module
 */
import 'reflect-metadata';
import { createPrivateKey, randomBytes, X509Certificate } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;

export interface TlsMaterial {
  /** PEM of the CA certificate: what clients add to their trust store. */
  caPem: string;
  /** Path of the CA certificate file. */
  caPath: string;
  /** PEM of the server certificate. */
  certPem: string;
  /** PEM (PKCS#8) of the server key. */
  keyPem: string;
}

function pem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString('base64').replace(/.{64}/g, '$&\n');
  return `-----BEGIN ${label}-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END ${label}-----\n`;
}

function der(pemText: string): Buffer {
  return Buffer.from(pemText.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
}

/** A positive random serial number (hex, top bit clear). */
function serial(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] = bytes[0]! & 0x7f;
  return Buffer.from(bytes).toString('hex');
}

/**
 * Writes `content` to `path` whole: a temporary file beside it, then a rename, so a kill leaves
 * the old file or the new one, never a part.
 */
async function writeWhole(path: string, content: string, mode: number): Promise<void> {
  const temporary = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await writeFile(temporary, content, { mode, flag: 'wx' });
    await rename(temporary, path);
  } finally {
    await rm(temporary, { force: true });
  }
}

type Ca = { cert: x509.X509Certificate; key: webcrypto.CryptoKey; pem: string; path: string };

/**
 * The CA kept in the folder, or undefined when there is none to use: a file missing, unreadable
 * or cut short (a kill while it was written by a version that wrote in place), a key that is not
 * the certificate's, or a certificate that expires within a day.
 */
async function loadCa(caPath: string, keyPath: string): Promise<Ca | undefined> {
  try {
    const [caPem, keyPem] = await Promise.all([readFile(caPath, 'utf8'), readFile(keyPath, 'utf8')]);
    if (!new X509Certificate(caPem).checkPrivateKey(createPrivateKey(keyPem))) return undefined;
    const cert = new x509.X509Certificate(caPem);
    if (cert.notAfter.getTime() <= Date.now() + DAY_MS) return undefined;
    const key = await crypto.subtle.importKey('pkcs8', der(keyPem), ALG, false, ['sign']);
    return { cert, key, pem: caPem, path: caPath };
  } catch {
    return undefined;
  }
}

async function loadOrCreateCa(dir: string): Promise<Ca> {
  const caPath = join(dir, 'ca.pem');
  const keyPath = join(dir, 'ca-key.pem');
  const kept = await loadCa(caPath, keyPath);
  if (kept) return kept;
  const keys = await crypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: 'CN=Converge vendor-sim CA, O=Converge',
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
  const caPem = cert.toString('pem') + '\n';
  // Key first: a kill between the two leaves a key that is not the certificate's, which the next
  // start replaces (loadCa).
  await writeWhole(keyPath, pem('PRIVATE KEY', await crypto.subtle.exportKey('pkcs8', keys.privateKey)), 0o600);
  await writeWhole(caPath, caPem, 0o644);
  return { cert, key: keys.privateKey, pem: caPem, path: caPath };
}

/**
 * Loads the CA from `dir` (or creates and saves it there; a CA the folder holds only in part, as a
 * kill while it was written leaves it, is replaced), then issues a fresh server
 * certificate for `localhost`, `127.0.0.1`, `::1` and `host`. Writes `ca.pem`, `ca-key.pem`
 * (0600), `server.pem` and `server-key.pem` (0600) into `dir`.
 */
export async function prepareTls(dir: string, host: string): Promise<TlsMaterial> {
  await mkdir(dir, { recursive: true });
  const ca = await loadOrCreateCa(dir);
  const keys = await crypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const names: x509.JsonGeneralName[] = [
    { type: 'dns', value: 'localhost' },
    { type: 'ip', value: '127.0.0.1' },
    { type: 'ip', value: '::1' },
  ];
  const bareHost = host.replace(/^\[|\]$/g, '');
  if (!names.some((n) => n.value === bareHost) && bareHost !== '' && bareHost !== '0.0.0.0' && bareHost !== '::') {
    names.push({ type: isIP(bareHost) ? 'ip' : 'dns', value: bareHost });
  }
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: 'CN=localhost, O=Converge vendor-sim',
    issuer: ca.cert.subject,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 365 * DAY_MS),
    signingKey: ca.key,
    publicKey: keys.publicKey,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const certPem = cert.toString('pem') + '\n';
  const keyPem = pem('PRIVATE KEY', await crypto.subtle.exportKey('pkcs8', keys.privateKey));
  await writeWhole(join(dir, 'server.pem'), certPem, 0o644);
  await writeWhole(join(dir, 'server-key.pem'), keyPem, 0o600);
  return { caPem: ca.pem, caPath: ca.path, certPem, keyPem };
}
