/**
 * `KubeConfig`: the clusters, users and contexts of a kubeconfig, and which context is current.
 *
 * The field names are those `@kubernetes/client-node` used (`caData`, `certFile`,
 * `skipTLSVerify`, …), so code written against it keeps reading the same properties; the file
 * format (`certificate-authority-data`, `client-certificate`, …) is translated by
 * `fromKubeconfigDocument` / `toKubeconfigDocument`. Paths are absolute once loaded (a relative
 * path in a file is resolved against that file's folder, as kubectl does).
 * @module
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { loadOnFirstUse } from '../loading/index.ts';
import { readDataField } from './data-field.ts';

export interface KubeConfigCluster {
  name: string;
  /** `https://host:port` (or `http://…`, which kubectl also accepts), possibly with a path prefix. */
  server: string;
  /** PEM of the CA bundle, base64-encoded (`certificate-authority-data`). */
  caData?: string;
  /** Path of the CA bundle (`certificate-authority`). */
  caFile?: string;
  /** `insecure-skip-tls-verify`: accept any server certificate. */
  skipTLSVerify?: boolean;
  /** `tls-server-name`: the name checked in the server's certificate (and sent as SNI). */
  tlsServerName?: string;
  /** `proxy-url`: an `http://` or `https://` proxy (CONNECT) for every request to this cluster. */
  proxyUrl?: string;
}

/** The exec credential plugin of a user (`users[].user.exec`). */
export interface ExecConfig {
  command: string;
  args?: string[];
  env?: { name: string; value: string }[];
  /** `client.authentication.k8s.io/v1` or `v1beta1`. */
  apiVersion: string;
  installHint?: string;
  provideClusterInfo?: boolean;
  /** `Never`, `IfAvailable` or `Always` (v1 requires it; this runtime never has a terminal to offer). */
  interactiveMode?: string;
}

export interface KubeConfigUser {
  name: string;
  /** A bearer token (`token`). */
  token?: string;
  /** A file holding the bearer token (`tokenFile`), re-read when it changes (rotated tokens). */
  tokenFile?: string;
  /** Client certificate PEM, base64-encoded (`client-certificate-data`). */
  certData?: string;
  /** Client certificate path (`client-certificate`). */
  certFile?: string;
  /** Client key PEM, base64-encoded (`client-key-data`). */
  keyData?: string;
  /** Client key path (`client-key`). */
  keyFile?: string;
  username?: string;
  password?: string;
  exec?: ExecConfig;
  /** `auth-provider` (gcp, azure, oidc): kept so that the error can name it; not supported. */
  authProvider?: { name: string; config?: Record<string, string> };
  /** `as`: impersonate this user. */
  impersonateUser?: string;
  /** `as-groups`: …in these groups (only with `as`). */
  impersonateGroups?: string[];
  /** `as-uid`: …with this UID (only with `as`). */
  impersonateUid?: string;
  /** `as-user-extra`: …with these extra fields (only with `as`). */
  impersonateExtra?: Record<string, string[]>;
}

export interface KubeConfigContext {
  name: string;
  cluster: string;
  user: string;
  namespace?: string;
}

export interface KubeConfigOptions {
  clusters: KubeConfigCluster[];
  users: KubeConfigUser[];
  contexts: KubeConfigContext[];
  currentContext: string;
}

/** A kubeconfig that cannot be used: missing, unreadable, malformed, or naming what it lacks. */
export class KubeConfigError extends Error {
  override readonly name = 'KubeConfigError';
}

export class KubeConfig {
  clusters: KubeConfigCluster[] = [];
  users: KubeConfigUser[] = [];
  contexts: KubeConfigContext[] = [];
  currentContext = '';
  /** Where it came from, for messages: file paths, or `in-cluster`. */
  source = '';

  /** Replaces the content with `options` (as `@kubernetes/client-node`'s method of that name). */
  loadFromOptions(options: Partial<KubeConfigOptions>): void {
    this.clusters = [...(options.clusters ?? [])];
    this.users = [...(options.users ?? [])];
    this.contexts = [...(options.contexts ?? [])];
    this.currentContext = options.currentContext ?? '';
    this.source = 'options';
  }

  /** Replaces the content with the kubeconfig file at `path` (YAML or JSON). */
  loadFromFile(path: string): void {
    const parsed = readKubeconfigFile(path);
    this.loadFromOptions(parsed);
    this.source = path;
  }

  getCurrentContext(): string {
    return this.currentContext;
  }

  /** Makes `name` the current context; throws when the kubeconfig has no such context. */
  setCurrentContext(name: string): void {
    if (!this.getContextObject(name)) {
      const known = this.contexts.map((c) => c.name).join(', ') || 'none';
      throw new KubeConfigError(`context "${name}" not found in ${this.source || 'the kubeconfig'} (contexts: ${known})`);
    }
    this.currentContext = name;
  }

  getContextObject(name: string): KubeConfigContext | null {
    return this.contexts.find((c) => c.name === name) ?? null;
  }

  getCluster(name: string): KubeConfigCluster | null {
    return this.clusters.find((c) => c.name === name) ?? null;
  }

  getUser(name: string): KubeConfigUser | null {
    return this.users.find((u) => u.name === name) ?? null;
  }

  getCurrentCluster(): KubeConfigCluster | null {
    const context = this.getContextObject(this.currentContext);
    return context ? this.getCluster(context.cluster) : null;
  }

  getCurrentUser(): KubeConfigUser | null {
    const context = this.getContextObject(this.currentContext);
    return context ? this.getUser(context.user) : null;
  }

  /** The kubeconfig as a file would hold it (JSON, which is YAML too: kubectl reads it). */
  exportConfig(): string {
    return JSON.stringify(toKubeconfigDocument(this), null, 2);
  }
}

// ---- the file format -------------------------------------------------------------------------

/** A kubeconfig file's content as plain data (what `toKubeconfigDocument` returns, ready for YAML or JSON). */
export type KubeconfigDocument = Record<string, unknown>;
type Doc = KubeconfigDocument;

/** Reads and parses one kubeconfig file; relative paths in it are resolved against its folder. */
export function readKubeconfigFile(path: string): KubeConfigOptions {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new KubeConfigError(code === 'ENOENT' ? `kubeconfig ${path} does not exist` : `cannot read kubeconfig ${path}: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = parseDocument(text);
  } catch (err) {
    throw new KubeConfigError(`kubeconfig ${path} is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  return fromKubeconfigDocument(doc ?? {}, dirname(resolve(path)), path);
}

/**
 * JSON is parsed as it is; anything else by the `yaml` package, loaded only then (in-cluster
 * configuration and JSON kubeconfigs never load it), as YAML 1.1 the way kubectl's go-yaml v2
 * reads it: `<<` merge keys are honoured (`cluster: {<<: *base, server: …}` inherits the anchored
 * fields), plain `on`, `y`, `no`, `0123`, `1_000` are booleans and numbers (so `namespace: on` is
 * refused, as kubectl refuses it), while timestamps and `1:20` stay strings (go-yaml v2 keeps them
 * so for untyped values).
 */
function parseDocument(text: string): unknown {
  const trimmed = text.trimStart();
  if (trimmed === '') return {};
  if (trimmed.startsWith('{')) {
    try {
      return JSON.parse(text);
    } catch {
      // YAML flow mappings also start with `{`: let the YAML parser decide.
    }
  }
  const yaml = loadOnFirstUse<typeof import('yaml')>('yaml');
  return yaml.parse(text, {
    merge: true,
    version: '1.1',
    customTags: (tags) => tags.filter((t) => typeof t === 'string' || (t.tag !== 'tag:yaml.org,2002:timestamp' && t.format !== 'TIME')),
  });
}

/**
 * The kubeconfig document (`apiVersion: v1`, `kind: Config`) to the model, paths made absolute.
 * A name used twice in `clusters`, `users` or `contexts` is refused, as kubectl refuses the file
 * (which of the two would win is not defined); so is a field of the wrong type (`namespace: 15`,
 * `insecure-skip-tls-verify: "true"`), which kubectl refuses rather than ignores. The message
 * names the field, never its value (it may be a secret).
 */
export function fromKubeconfigDocument(doc: unknown, baseDir: string, source = 'kubeconfig'): KubeConfigOptions {
  if (!isRecord(doc)) throw new KubeConfigError(`${source}: a kubeconfig is a mapping (apiVersion, clusters, users, contexts)`);
  const fields = typedFields(source);
  const str = (body: Doc, key: string, where: string) => fields.string(body, key, where);
  const path = (body: Doc, key: string, where: string) => {
    const p = fields.string(body, key, where);
    return p === undefined ? undefined : isAbsolute(p) ? p : resolve(baseDir, p);
  };
  const named = (list: unknown, what: string, field: string): { name: string; body: Doc }[] => {
    if (list == null) return [];
    if (!Array.isArray(list)) throw new KubeConfigError(`${source}: ${what} must be a list`);
    const seen = new Set<string>();
    return list.map((item, i) => {
      if (!isRecord(item) || typeof item.name !== 'string' || item.name === '') throw new KubeConfigError(`${source}: ${what}[${i}] has no name`);
      if (seen.has(item.name)) throw new KubeConfigError(`${source}: ${what}[${i}] repeats the name "${item.name}" (kubectl refuses duplicate names)`);
      seen.add(item.name);
      const body = item[field] ?? {};
      if (!isRecord(body)) throw new KubeConfigError(`${source}: ${what}[${i}] (${item.name}).${field} must be a mapping`);
      return { name: item.name, body };
    });
  };
  const clusters = named(doc.clusters, 'clusters', 'cluster').map(({ name, body }): KubeConfigCluster => {
    const at = `clusters[${name}].cluster`;
    fields.boolean(body, 'disable-compression', at);
    return {
      name,
      server: str(body, 'server', at) ?? '',
      ...opt('caData', fields.data(body, 'certificate-authority-data', at)),
      ...opt('caFile', path(body, 'certificate-authority', at)),
      ...opt('skipTLSVerify', fields.boolean(body, 'insecure-skip-tls-verify', at) === true ? true : undefined),
      ...opt('tlsServerName', str(body, 'tls-server-name', at)),
      ...opt('proxyUrl', str(body, 'proxy-url', at)),
    };
  });
  const users = named(doc.users, 'users', 'user').map(({ name, body }): KubeConfigUser => {
    const at = `users[${name}].user`;
    const exec = fields.mapping(body, 'exec', at);
    const provider = fields.mapping(body, 'auth-provider', at);
    const groups = fields.strings(body, 'as-groups', at);
    const extraDoc = fields.mapping(body, 'as-user-extra', at);
    const extra = extraDoc ? Object.fromEntries(Object.keys(extraDoc).map((k) => [k, fields.strings(extraDoc, k, `${at}.as-user-extra`) ?? []])) : undefined;
    return {
      name,
      ...opt('token', str(body, 'token', at)),
      ...opt('tokenFile', path(body, 'tokenFile', at)),
      ...opt('certData', fields.data(body, 'client-certificate-data', at)),
      ...opt('certFile', path(body, 'client-certificate', at)),
      ...opt('keyData', fields.data(body, 'client-key-data', at)),
      ...opt('keyFile', path(body, 'client-key', at)),
      ...opt('username', str(body, 'username', at)),
      ...opt('password', str(body, 'password', at)),
      ...opt('impersonateUser', str(body, 'as', at)),
      ...opt('impersonateGroups', groups?.length ? groups : undefined),
      ...opt('impersonateUid', str(body, 'as-uid', at)),
      ...opt('impersonateExtra', extra && Object.keys(extra).length ? extra : undefined),
      ...opt('exec', exec ? execFrom(exec, baseDir, fields, `${at}.exec`) : undefined),
      ...opt('authProvider', provider ? authProviderFrom(provider, fields, `${at}.auth-provider`) : undefined),
    };
  });
  const contexts = named(doc.contexts, 'contexts', 'context').map(({ name, body }): KubeConfigContext => {
    const at = `contexts[${name}].context`;
    return {
      name,
      cluster: str(body, 'cluster', at) ?? '',
      user: str(body, 'user', at) ?? '',
      ...opt('namespace', str(body, 'namespace', at)),
    };
  });
  return { clusters, users, contexts, currentContext: str(doc, 'current-context', '') ?? '' };
}

type TypedFields = ReturnType<typeof typedFields>;

/**
 * Reads fields as kubectl's typed decoding does: absent or `null` is absent (an empty string too,
 * for strings), a value of another type refuses the file.
 */
function typedFields(source: string) {
  const wrong = (where: string, key: string, want: string, value: unknown): KubeConfigError => {
    const got = Array.isArray(value) ? 'a list' : value instanceof Date ? 'a timestamp' : typeof value === 'object' ? 'a mapping' : `a ${typeof value}`;
    return new KubeConfigError(`${source}: ${where ? `${where}.` : ''}${key} must be ${want}, not ${got} (kubectl refuses the file too)`);
  };
  return {
    /** An error about `where` in this file. */
    error(where: string, message: string): KubeConfigError {
      return new KubeConfigError(`${source}: ${where}: ${message}`);
    },
    string(body: Doc, key: string, where: string): string | undefined {
      const v = body[key];
      if (v == null) return undefined;
      if (typeof v !== 'string') throw wrong(where, key, 'a string', v);
      return v === '' ? undefined : v;
    },
    /** A `-data` field: base64 as kubectl reads it (`data-field.ts`), its line breaks removed. */
    data(body: Doc, key: string, where: string): string | undefined {
      const text = this.string(body, key, where);
      if (text === undefined) return undefined;
      const read = readDataField(text);
      if ('badAt' in read) {
        const hint = /-----BEGIN /.test(text) ? `; it holds a PEM: base64-encode it here, or name its file in ${key.replace(/-data$/, '')}` : '';
        throw new KubeConfigError(`${source}: ${where ? `${where}.` : ''}${key} is not base64 (at input byte ${read.badAt})${hint} (kubectl refuses the file too)`);
      }
      return read.base64 === '' ? undefined : read.base64;
    },
    boolean(body: Doc, key: string, where: string): boolean | undefined {
      const v = body[key];
      if (v == null) return undefined;
      if (typeof v !== 'boolean') throw wrong(where, key, 'true or false', v);
      return v;
    },
    strings(body: Doc, key: string, where: string): string[] | undefined {
      const v = body[key];
      if (v == null) return undefined;
      if (!Array.isArray(v) || !v.every((x) => typeof x === 'string' || x == null)) throw wrong(where, key, 'a list of strings', v);
      return v.map((x) => (x == null ? '' : String(x)));
    },
    mapping(body: Doc, key: string, where: string): Doc | undefined {
      const v = body[key];
      if (v == null) return undefined;
      if (!isRecord(v)) throw wrong(where, key, 'a mapping', v);
      return v;
    },
    list(body: Doc, key: string, where: string): unknown[] | undefined {
      const v = body[key];
      if (v == null) return undefined;
      if (!Array.isArray(v)) throw wrong(where, key, 'a list', v);
      return v;
    },
  };
}

function authProviderFrom(provider: Doc, fields: TypedFields, at: string): NonNullable<KubeConfigUser['authProvider']> {
  const config = fields.mapping(provider, 'config', at);
  if (config) for (const key of Object.keys(config)) fields.string(config, key, `${at}.config`);
  return { name: fields.string(provider, 'name', at) ?? '', ...opt('config', config ? (config as Record<string, string>) : undefined) };
}

function execFrom(exec: Doc, baseDir: string, fields: TypedFields, at: string): ExecConfig {
  const given = fields.string(exec, 'command', at);
  if (given === undefined) throw fields.error(at, 'command is required');
  // As client-go: a command with a path separator is a path (relative to the file); a bare name is looked up on PATH.
  const command = given.includes('/') && !isAbsolute(given) ? resolve(baseDir, given) : given;
  const envList = fields.list(exec, 'env', at);
  const env = envList?.map((e, i) => {
    if (!isRecord(e)) throw fields.error(at, `env[${i}] must be a mapping (name, value)`);
    return { name: fields.string(e, 'name', `${at}.env[${i}]`) ?? '', value: fields.string(e, 'value', `${at}.env[${i}]`) ?? '' };
  });
  const args = fields.strings(exec, 'args', at);
  const installHint = fields.string(exec, 'installHint', at);
  const interactiveMode = fields.string(exec, 'interactiveMode', at);
  return {
    command,
    apiVersion: fields.string(exec, 'apiVersion', at) ?? '',
    ...opt('args', args),
    ...opt('env', env),
    ...opt('installHint', installHint),
    ...opt('provideClusterInfo', fields.boolean(exec, 'provideClusterInfo', at) === true ? true : undefined),
    ...opt('interactiveMode', interactiveMode),
  };
}

/** The model back to the file format. */
export function toKubeconfigDocument(kc: KubeConfigOptions): KubeconfigDocument {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: kc.clusters.map((c) => ({
      name: c.name,
      cluster: {
        server: c.server,
        ...opt('certificate-authority-data', c.caData),
        ...opt('certificate-authority', c.caFile),
        ...opt('insecure-skip-tls-verify', c.skipTLSVerify),
        ...opt('tls-server-name', c.tlsServerName),
        ...opt('proxy-url', c.proxyUrl),
      },
    })),
    users: kc.users.map((u) => ({
      name: u.name,
      user: {
        ...opt('token', u.token),
        ...opt('tokenFile', u.tokenFile),
        ...opt('client-certificate-data', u.certData),
        ...opt('client-certificate', u.certFile),
        ...opt('client-key-data', u.keyData),
        ...opt('client-key', u.keyFile),
        ...opt('username', u.username),
        ...opt('password', u.password),
        ...opt('as', u.impersonateUser),
        ...opt('as-groups', u.impersonateGroups),
        ...opt('as-uid', u.impersonateUid),
        ...opt('as-user-extra', u.impersonateExtra),
        ...opt('exec', u.exec),
        ...opt('auth-provider', u.authProvider),
      },
    })),
    contexts: kc.contexts.map((c) => ({
      name: c.name,
      context: { cluster: c.cluster, user: c.user, ...opt('namespace', c.namespace) },
    })),
    'current-context': kc.currentContext,
  };
}

function opt<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

function isRecord(v: unknown): v is Doc {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
