/**
 * `Credentials`: what a request to the current context's cluster needs — the server, TLS
 * material and the authentication headers — from a `KubeConfig`.
 *
 * Precedence as client-go: a `tokenFile` wins over a `token`, which is what is sent while the file
 * cannot be read; a token and basic auth (`username`/`password`) together are refused, as kubectl
 * refuses them; an exec plugin runs only when the user has no token, basic auth or client
 * certificate of its own. A client certificate may come from the kubeconfig (data or file) or
 * from an exec plugin; `tls().id` changes when it does, so a caller can rebuild its connections.
 *
 * Token files are read again every `tokenFileCheckMs` (default 1 s): in-cluster projected
 * ServiceAccount tokens rotate (the kubelet rewrites the file), and a long-running operator must
 * pick up the new one. Once a token was read, a file that cannot be read (gone, empty or not a
 * file for a moment) keeps it in use until the file reads again. Exec credentials are kept until
 * they expire or `invalidate()` is called (the API server answered 401).
 *
 * Nothing here logs; errors name files and commands, never a token, key or password.
 * @module
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { KubeConfig, KubeConfigCluster, KubeConfigUser } from './kubeconfig.ts';
import { KubeConfigError } from './kubeconfig.ts';
import { ExecCredentialPlugin } from './exec-plugin.ts';
import type { ExecPluginOptions } from './exec-plugin.ts';
import { readDataField } from './data-field.ts';
import { holdsControlCharacter, utf8HeaderValue } from './header-value.ts';

export interface TlsMaterial {
  /** Changes whenever the material does (an exec plugin returned a new client certificate). */
  id: string;
  ca?: string;
  cert?: string;
  key?: string;
  rejectUnauthorized: boolean;
  servername?: string;
}

/** What a request was sent with: its `authorization` header and `TlsMaterial.id`. */
export interface UsedCredentials {
  authorization?: string | undefined;
  tlsId?: string | undefined;
}

export interface CredentialsOptions {
  /** How often a token file is checked for a new token (default 1000 ms). */
  tokenFileCheckMs?: number;
  /** Monotonic ms (default `performance.now`), for the token file check interval. */
  monotonic?: () => number;
  exec?: ExecPluginOptions;
}

let execTlsVersions = 0;

export class Credentials {
  /** The server URL without a trailing slash, e.g. `https://10.0.0.1:6443`. */
  readonly server: string;
  readonly protocol: 'http:' | 'https:';
  readonly proxyUrl: string | undefined;
  /** True when headers or TLS material can change between requests (token file, exec plugin). */
  readonly dynamic: boolean;
  readonly #staticTls: TlsMaterial;
  readonly #staticHeaders: Record<string, string | string[]>;
  readonly #tokenFile: TokenFile | undefined;
  readonly #exec: ExecCredentialPlugin | undefined;
  #execTls: TlsMaterial | undefined;
  #execCert = '';

  constructor(kc: KubeConfig, options: CredentialsOptions = {}) {
    const where = kc.source || 'the kubeconfig';
    const contextName = kc.getCurrentContext();
    if (!contextName) throw new KubeConfigError(`${where} has no current context (choose one: kubectl config use-context <name>; commands that take --context accept one)`);
    const context = kc.getContextObject(contextName);
    if (!context) throw new KubeConfigError(`${where}: the current context "${contextName}" is not defined`);
    const cluster = kc.getCluster(context.cluster);
    if (!cluster) throw new KubeConfigError(`${where}: context "${contextName}" names cluster "${context.cluster}", which is not defined`);
    const user: KubeConfigUser = (context.user && kc.getUser(context.user)) || { name: '' };
    if (context.user && !kc.getUser(context.user)) throw new KubeConfigError(`${where}: context "${contextName}" names user "${context.user}", which is not defined`);
    let url: URL;
    try {
      url = new URL(cluster.server);
    } catch {
      throw new KubeConfigError(`${where}: cluster "${cluster.name}" has ${cluster.server ? `an invalid server URL "${cluster.server}"` : 'no server'}`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new KubeConfigError(`${where}: cluster "${cluster.name}" server "${cluster.server}" is neither https:// nor http://`);
    if (user.authProvider) {
      throw new KubeConfigError(
        `${where}: user "${user.name}" uses auth-provider "${user.authProvider.name}", which is not supported (kubectl removed the gcp and azure providers in 1.26): ` +
          'use an exec credential plugin (gke-gcloud-auth-plugin, kubelogin, …)',
      );
    }
    this.server = cluster.server.replace(/\/+$/, '');
    this.protocol = url.protocol;
    if (cluster.proxyUrl) checkProxyUrl(cluster.proxyUrl, `${where}: cluster "${cluster.name}"`);
    this.proxyUrl = cluster.proxyUrl;
    this.#staticTls = { id: 'static', ...tlsFromKubeconfig(cluster, user, where) };
    this.#staticHeaders = impersonationHeaders(user, where);
    if (user.token && (user.username || user.password)) {
      throw new KubeConfigError(`${where}: user "${user.name}" has both a token and a username/password: only one authentication method is allowed (as kubectl)`);
    }
    if (user.token && holdsControlCharacter(user.token)) {
      throw new KubeConfigError(`${where}: user "${user.name}": token holds a line break or another control character, which no HTTP header can carry (a YAML "|" block keeps its last line break: use "|-" or a plain string)`);
    }
    if (user.tokenFile) {
      this.#tokenFile = new TokenFile(user.tokenFile, options.tokenFileCheckMs ?? 1000, options.monotonic ?? (() => performance.now()), user.token || undefined);
    } else if (user.token) this.#staticHeaders.authorization = `Bearer ${user.token}`;
    else if (user.username) this.#staticHeaders.authorization = `Basic ${Buffer.from(`${user.username}:${user.password ?? ''}`).toString('base64')}`;
    else if (user.exec && !this.#staticTls.cert) this.#exec = new ExecCredentialPlugin(user.exec, cluster, options.exec);
    this.dynamic = Boolean(this.#tokenFile || this.#exec);
  }

  /** Authentication (and impersonation) headers for the next request. */
  async headers(): Promise<Record<string, string | string[]>> {
    if (this.#tokenFile) return { ...this.#staticHeaders, authorization: `Bearer ${await this.#tokenFile.read()}` };
    if (this.#exec) {
      const cred = await this.#exec.get();
      return cred.token ? { ...this.#staticHeaders, authorization: `Bearer ${cred.token}` } : this.#staticHeaders;
    }
    return this.#staticHeaders;
  }

  /** The TLS material for the next connection (see `TlsMaterial.id`). */
  async tls(): Promise<TlsMaterial> {
    if (!this.#exec) return this.#staticTls;
    const cred = await this.#exec.get();
    if (!cred.clientCertificateData) return this.#staticTls;
    const fingerprint = cred.clientCertificateData;
    if (!this.#execTls || this.#execCert !== fingerprint) {
      this.#execCert = fingerprint;
      this.#execTls = { ...this.#staticTls, id: `exec-${++execTlsVersions}`, cert: cred.clientCertificateData, key: cred.clientKeyData! };
    }
    return this.#execTls;
  }

  /**
   * The API server refused the credentials (401): the next request gets fresh ones. Given what
   * the refused request was sent with, only those are dropped: a 401 that arrives after they
   * were replaced (requests in flight across a refresh) leaves the new ones alone, as client-go
   * does, so a burst of late 401s does not run an exec plugin again for each.
   */
  invalidate(used?: UsedCredentials): void {
    if (this.#exec && (!used || this.#isExecCurrent(used))) this.#exec.invalidate();
    if (this.#tokenFile && (!used || this.#tokenFile.isCurrent(used.authorization))) this.#tokenFile.invalidate();
  }

  #isExecCurrent(used: UsedCredentials): boolean {
    const current = this.#exec?.cached;
    if (!current) return false; // already dropped, or a run in flight: what it brings is new
    if (current.token) return used.authorization === `Bearer ${current.token}`;
    return this.#execTls !== undefined && used.tlsId === this.#execTls.id && this.#execCert === current.clientCertificateData;
  }
}

/**
 * A proxy kubectl can use: http, https (CONNECT) or socks5. Anything else is refused, as kubectl
 * refuses it; Node's agent would ignore it and connect around the proxy. The URL is never shown
 * (it may carry a password).
 */
function checkProxyUrl(text: string, where: string): void {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new KubeConfigError(`${where}: proxy-url is not a URL`);
  }
  if (!['http:', 'https:', 'socks5:'].includes(url.protocol)) {
    throw new KubeConfigError(`${where}: proxy-url has the scheme "${url.protocol.slice(0, -1).slice(0, 20)}"; use http, https or socks5, as kubectl`);
  }
}

function tlsFromKubeconfig(cluster: KubeConfigCluster, user: KubeConfigUser, where: string): Omit<TlsMaterial, 'id'> {
  const read = (file: string, what: string) => {
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      throw new KubeConfigError(`${where}: cannot read the ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  };
  // As kubectl reads it (data-field.ts): Node's decoder would turn a pasted PEM into a few bytes of nothing.
  const decode = (data: string, owner: string, field: string) => {
    const read = readDataField(data);
    if ('badAt' in read) throw new KubeConfigError(`${where}: ${owner}: ${field} is not base64 (at input byte ${read.badAt})`);
    return Buffer.from(read.base64, 'base64').toString('utf8');
  };
  if (cluster.skipTLSVerify && (cluster.caData || cluster.caFile)) {
    throw new KubeConfigError(`${where}: cluster "${cluster.name}" sets both insecure-skip-tls-verify and a certificate authority (as kubectl, refused: choose one)`);
  }
  const ca = cluster.caData ? decode(cluster.caData, `cluster "${cluster.name}"`, 'certificate-authority-data') : cluster.caFile ? read(cluster.caFile, 'certificate authority') : undefined;
  // Node takes a CA without a PEM certificate (a DER file, a key by mistake) as a bundle that
  // trusts no server: every request would fail TLS verification, naming no kubeconfig. kubectl
  // refuses it too ("unable to load root certificates").
  if (ca !== undefined && !ca.includes('-----BEGIN CERTIFICATE-----')) {
    const what = cluster.caData ? 'certificate-authority-data' : `the certificate authority ${cluster.caFile}`;
    throw new KubeConfigError(`${where}: cluster "${cluster.name}": ${what} holds no PEM certificate`);
  }
  const cert = user.certData ? decode(user.certData, `user "${user.name}"`, 'client-certificate-data') : user.certFile ? read(user.certFile, 'client certificate') : undefined;
  const key = user.keyData ? decode(user.keyData, `user "${user.name}"`, 'client-key-data') : user.keyFile ? read(user.keyFile, 'client key') : undefined;
  if (Boolean(cert) !== Boolean(key)) throw new KubeConfigError(`${where}: user "${user.name}" has a client certificate without a key, or a key without a certificate`);
  return {
    ...(ca ? { ca } : {}),
    ...(cert ? { cert, key: key! } : {}),
    rejectUnauthorized: !cluster.skipTLSVerify,
    ...(cluster.tlsServerName ? { servername: cluster.tlsServerName } : {}),
  };
}

/** A bearer token in a file, read again every check interval (and after a 401 for it). */
class TokenFile {
  readonly #path: string;
  readonly #checkMs: number;
  readonly #monotonic: () => number;
  /** The kubeconfig's own `token`, sent while the file cannot be read (client-go). */
  readonly #fallback: string | undefined;
  #token: string | undefined;
  #checkedAt = -Infinity;
  #reading: Promise<string> | undefined;

  constructor(path: string, checkMs: number, monotonic: () => number, fallback?: string) {
    this.#path = path;
    this.#checkMs = checkMs;
    this.#monotonic = monotonic;
    this.#fallback = fallback;
  }

  async read(): Promise<string> {
    // The token read last, or the fallback while the file cannot be read: either is kept for
    // `checkMs`, so a missing file costs one failed read per interval, not one per request.
    const current = this.#token ?? (this.#checkedAt > -Infinity ? this.#fallback : undefined);
    if (current !== undefined && this.#monotonic() - this.#checkedAt < this.#checkMs) return current;
    this.#reading ??= this.#refresh().finally(() => {
      this.#reading = undefined;
    });
    return this.#reading;
  }

  invalidate(): void {
    this.#checkedAt = -Infinity;
  }

  /** Whether `authorization` carries the token read last (or no token was read yet). */
  isCurrent(authorization: string | undefined): boolean {
    return this.#token === undefined || authorization === `Bearer ${this.#token}`;
  }

  async #refresh(): Promise<string> {
    try {
      // Read at every check, as client-go does, not only when size, mtime or inode changed: those
      // can all stay the same when the token changes (a same-length token written within one
      // timestamp tick — 1 s on some filesystems, a kernel tick before Linux 6.13 — in place, or
      // atomically when ext4 hands the new file the inode number freed a moment before), and the
      // new token would then never be read (credentials.model.test.ts found it).
      const token = (await readFile(this.#path, 'utf8')).trim();
      if (!token) throw new KubeConfigError(`token file ${this.#path} is empty`);
      this.#token = token;
      this.#checkedAt = this.#monotonic();
      return this.#token;
    } catch (err) {
      // A rotation or a write in progress (the file briefly missing, empty, half-replaced): keep
      // using the token read last, as client-go does on any error; the next request looks again.
      if (this.#token !== undefined) return this.#token;
      if (this.#fallback !== undefined) {
        this.#checkedAt = this.#monotonic();
        return this.#fallback;
      }
      if (err instanceof KubeConfigError) throw err;
      throw new KubeConfigError(`cannot read token file ${this.#path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
}

/**
 * The impersonation headers of `user`, as client-go sends them: the user, one `Impersonate-Group`
 * per group, the UID, and one `Impersonate-Extra-<key>` per extra value (the key escaped to a
 * header name, as client-go's headerKeyEscape). Groups, UID or extra without a user are refused,
 * as client-go refuses them.
 */
function impersonationHeaders(user: KubeConfigUser, where: string): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  const asUser = user.impersonateUser;
  if (!asUser) {
    if (user.impersonateGroups?.length || user.impersonateUid || Object.keys(user.impersonateExtra ?? {}).length) {
      throw new KubeConfigError(`${where}: user "${user.name}" sets as-groups, as-uid or as-user-extra without impersonating a user (as): kubectl refuses that too`);
    }
    return headers;
  }
  // As kubectl sends them: the UTF-8 bytes of each name (header-value.ts).
  const wire = (value: string, field: string): string => {
    if (holdsControlCharacter(value)) throw new KubeConfigError(`${where}: user "${user.name}": ${field} holds a line break or another control character, which no HTTP header can carry`);
    return utf8HeaderValue(value);
  };
  headers['impersonate-user'] = wire(asUser, 'as');
  if (user.impersonateGroups?.length) headers['impersonate-group'] = user.impersonateGroups.map((g) => wire(g, 'as-groups'));
  if (user.impersonateUid) headers['impersonate-uid'] = wire(user.impersonateUid, 'as-uid');
  for (const [key, values] of Object.entries(user.impersonateExtra ?? {})) {
    if (values.length) headers[`impersonate-extra-${headerKeyEscape(key)}`] = values.map((v) => wire(v, 'as-user-extra'));
  }
  return headers;
}

/** A header name from any key: bytes outside an HTTP token (and `%`) percent-encoded, as client-go's headerKeyEscape. */
function headerKeyEscape(key: string): string {
  let out = '';
  for (const byte of Buffer.from(key, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9!#$&'*+\-.^_`|~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
