/**
 * Differential property test: `loadKubeConfig` (finding, parsing and merging kubeconfig files)
 * against the real `kubectl` on PATH (skipped when there is none).
 *
 * Generated (fast-check): 1–3 kubeconfig files in nested folders (names with spaces and
 * unicode), written as JSON or as YAML (block or flow style; plain, single- or double-quoted
 * scalars, quoted where YAML 1.1 would read a boolean, number or null; sometimes a `<<: *anchor`
 * merge key), or empty / comment-only. Clusters, users and contexts take names from a small
 * per-run pool of odd but valid names (dots, slashes, colons, unicode, `#`, `: `, `on`, `1_000`…)
 * so that files overlap with different contents; `current-context` in most files, sometimes
 * naming no context; contexts naming missing clusters or users, or none; `namespace`; `server`;
 * relative and absolute `certificate-authority` / `client-certificate` / `client-key` /
 * `tokenFile` paths (some missing on disk), `-data` fields (now and then with a path too),
 * `insecure-skip-tls-verify`, `tls-server-name`, `proxy-url`; tokens, basic auth, `as`, exec
 * plugins (relative, absolute and PATH commands, args, env, interactiveMode), `auth-provider`;
 * `preferences` and `extensions` noise; rarely a name defined twice in one file, or a field of
 * another type (`cluster: 15`, `insecure-skip-tls-verify: "true"`, `exec.args: {a: b}`); now and
 * then YAML emitted as 1.2, which writes `on`, `y`, `1_000` plain where kubectl reads YAML 1.1
 * booleans and numbers. `KUBECONFIG`
 * lists the files in random order, some twice, some by a path relative to the working folder,
 * with missing files and empty segments among them.
 *
 * Compared, for the same `KUBECONFIG`, with `HOME` an empty folder for both (no `~/.kube/config`):
 * - `kubectl config view --raw -o json` (the merged view) with the `KubeConfig` of
 *   `loadKubeConfig`: the same cluster, user and context names; every entry field by field
 *   (server, CA data/path, TLS settings, proxy; token, tokenFile, client cert/key data and paths,
 *   basic auth, `as`, exec command/args/env/…, auth-provider; context cluster, user, namespace);
 *   the current context. kubectl shows paths as written: they are resolved here against the
 *   folder of the file that defined the entry, as client-go's `ResolveLocalPaths` does (each
 *   cluster and user carries an `extensions` marker naming its file). When kubectl refuses the
 *   files, `loadKubeConfig` must throw a `KubeConfigError` naming the same file.
 * - `kubectl config current-context` with `getCurrentContext()`.
 * - `kubectl config view --minify --raw -o json` (the current context resolved) with our current
 *   context, cluster and user; when kubectl cannot resolve it (no current context; a context,
 *   cluster or user that does not exist), `new Credentials(kc)` must throw a `KubeConfigError`
 *   that says which.
 * - `kubectl config view --minify --flatten -o json`: kubectl reads the CA, client certificate
 *   and key files itself (every file written here holds its own location), which checks where it
 *   resolves a relative path against where we do; when it cannot open one, which path.
 *
 * Why kubectl: it is what users check a kubeconfig with, and the runtime promises to find and
 * merge kubeconfigs as kubectl does; client-go's rules (the first file wins a name and the
 * current context, paths relative to the defining file, YAML 1.1, duplicate names refused) are
 * easier to get subtly wrong than to state.
 *
 * Deliberate differences, not asserted: when the files hold no cluster, user or context, ours
 * looks in-cluster and throws "no kubeconfig found" (checked) where kubectl shows an empty config;
 * a context with no cluster is refused by `Credentials` where `--minify` passes over it; kubectl
 * defaults an exec plugin's `interactiveMode` to `IfAvailable` for `v1beta1`, ours leaves it
 * unset; `provideClusterInfo: false`, empty `args`/`env`/`installHint`/auth-provider `config`
 * count as absent.
 *
 * `KUBECONFIG_DIFF_RUNS` sets the number of runs (default 80, ≈ 12 s: three kubectl calls per
 * run in parallel, a fourth when the current context resolves).
 * @module
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import fc from 'fast-check';
import { Document, Pair, Scalar, isMap, isSeq, stringify } from 'yaml';
import type { YAMLMap } from 'yaml';
import { Credentials, KubeConfigError, loadKubeConfig } from './index.ts';
import type { KubeConfig, KubeConfigCluster, KubeConfigContext, KubeConfigUser } from './index.ts';

const RUNS = Number.parseInt(process.env.KUBECONFIG_DIFF_RUNS ?? '', 10) || 80;

const hasKubectl = (() => {
  try {
    execFileSync('kubectl', ['version', '--client', '-o', 'json'], { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
})();

// ---- generation --------------------------------------------------------------------------------

/** Odd but valid names; the first few are the likeliest, so that files overlap. */
const NAMES = [
  'prod',
  'dev.example.com',
  'arn:aws:eks:eu-west-1:123456789012:cluster/prod',
  'ünï/cødé',
  'gke_proj_europe-west1-b_c1',
  'кластер.集群',
  'a b',
  '🚀:x',
  '-lead',
  '#hash',
  'x: y',
  "it's",
  '@at',
  // Strings to kubectl only when quoted (YAML 1.1 booleans, numbers, null): the emitter quotes them.
  'on',
  'y',
  'NO',
  '1_000',
  '0b101',
  '1e3',
  'null',
];
const nameArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...NAMES.slice(0, 4)) },
  { weight: 2, arbitrary: fc.constantFrom(...NAMES.slice(4)) },
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: fc.constantFrom('a', 'b', '.', '/', ':', '-', '_', 'é', '集', '🚀', ' ', '@'), minLength: 1, maxLength: 6 })
      // go-yaml v2 (kubectl) refuses a plain scalar that starts with `:` in a flow collection
      // (`{name: :a}`), which is valid YAML and which the emitter writes: a kubectl limitation.
      .filter((n) => !n.startsWith(':')),
  },
);

/** Paths as written in a file; `ABS` ones become absolute (under the run's folder) when written. */
const ABS = '\u0000ABS/';
const REL_PATHS = ['ca.pem', 'certs/client.crt', './keys/client.key', '../shared/ca.pem', 'sub/../token', 'ü dir/f.pem', 'missing/nothing.pem'];
const ABS_PATHS = [`${ABS}abs/ca.pem`, `${ABS}abs/client.key`, `${ABS}abs/missing.pem`];
const pathArb = fc.constantFrom(...REL_PATHS, ...ABS_PATHS);
const CONFIG_DIRS = ['', 'a', 'a/b', 'c d', 'ü'];

const b64Arb = fc.uint8Array({ minLength: 1, maxLength: 9 }).map((b) => Buffer.from(b).toString('base64'));
/**
 * `-data` as people get it wrong, or right in another layout: a PEM pasted as is, padding left
 * off, a space inside (kubectl refuses each); line breaks inside (kubectl skips them).
 */
const oddB64Arb = fc.oneof(
  fc.constant('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'),
  b64Arb.filter((d) => d.endsWith('=')).map((d) => d.replace(/=+$/, '')),
  fc.tuple(b64Arb, fc.nat()).map(([d, i]) => `${d.slice(0, i % d.length)} ${d.slice(i % d.length)}`),
  fc.tuple(b64Arb, fc.nat(), fc.constantFrom('\n', '\r\n')).map(([d, i, br]) => `${d.slice(0, i % (d.length + 1))}${br}${d.slice(i % (d.length + 1))}`),
);
const wordArb = fc.constantFrom('t0k3n', 'sha256~abc', 'x y', 'ü', 'p@ss:word', '#1');
const extensionNoise = fc.constantFrom(
  { name: 'noise.example.com', extension: { apiVersion: 'example.com/v1', kind: 'Noise', spec: { a: 1, b: [true, null] } } },
  { name: 'plain', extension: { foo: 'bar' } },
);

/** A file given by path, by data, by neither, or (rarely: kubectl refuses to flatten it) by both. */
const fileOrData = (pathKey: string, dataKey: string) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant({}) },
    { weight: 4, arbitrary: pathArb.map((p) => ({ [pathKey]: p })) },
    { weight: 2, arbitrary: b64Arb.map((d) => ({ [dataKey]: d })) },
    { weight: 1, arbitrary: oddB64Arb.map((d) => ({ [dataKey]: d })) },
    { weight: 1, arbitrary: fc.tuple(pathArb, b64Arb).map(([p, d]) => ({ [pathKey]: p, [dataKey]: d })) },
  );
const withFileOrData = (arb: fc.Arbitrary<Record<string, unknown>>, ...pairs: [string, string][]) =>
  fc.tuple(arb, ...pairs.map(([p, d]) => fileOrData(p, d))).map(([body, ...parts]) => Object.assign({}, body, ...parts) as Record<string, unknown>);

const clusterBodyArb = withFileOrData(fc.record(
  {
    server: fc.constantFrom('https://a.example:6443', 'http://127.0.0.1:8001', 'https://[fd00::1]:443/k8s', 'https://ü.example/', ''),
    'insecure-skip-tls-verify': fc.boolean(),
    'tls-server-name': fc.constantFrom('kubernetes', 'api.internal', ''),
    'proxy-url': fc.constantFrom('http://proxy.example:3128', 'socks5://127.0.0.1:1080', 'https://u:p@proxy.example'),
    'disable-compression': fc.boolean(),
    extensions: fc.array(extensionNoise, { maxLength: 1 }),
  },
  { requiredKeys: [] },
), ['certificate-authority', 'certificate-authority-data']);

const execArb = fc.record(
  {
    apiVersion: fc.constantFrom('client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'),
    command: fc.constantFrom('gke-gcloud-auth-plugin', './bin/plugin', 'bin/plugin', '/usr/local/bin/plugin', '../tools/plugin'),
    args: fc.array(fc.constantFrom('--flag', 'get-token', '--cluster=a b', 'ü', ''), { maxLength: 3 }),
    env: fc.array(fc.record({ name: fc.constantFrom('FOO', 'AWS_PROFILE', 'X_Ü'), value: fc.constantFrom('bar', '', 'a:b', '1') }), { maxLength: 2 }),
    interactiveMode: fc.constantFrom('Never', 'IfAvailable', 'Always'),
    provideClusterInfo: fc.boolean(),
    installHint: fc.constantFrom('brew install plugin', ''),
  },
  { requiredKeys: ['apiVersion', 'command'] },
);

const userBodyArb = withFileOrData(fc.record(
  {
    token: wordArb,
    tokenFile: pathArb,
    username: wordArb,
    password: wordArb,
    as: fc.constantFrom('system:admin', 'jane@example.com'),
    'as-groups': fc.constantFrom(['system:masters'], ['platform-admins', 'system:authenticated']),
    'as-uid': fc.constantFrom('1234', 'u-42'),
    exec: execArb,
    'auth-provider': fc.record({ name: fc.constantFrom('oidc', 'gcp'), config: fc.dictionary(fc.constantFrom('client-id', 'idp-issuer-url'), fc.constantFrom('x', 'https://issuer')) }),
    extensions: fc.array(extensionNoise, { maxLength: 1 }),
  },
  { requiredKeys: [] },
), ['client-certificate', 'client-certificate-data'], ['client-key', 'client-key-data']);

/** A name from the scenario's pool (so that files overlap and contexts resolve), or now and then another. */
const pickArb = (pool: string[], other: string) =>
  fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...pool) }, { weight: 1, arbitrary: fc.constant(other) });

const contextBodyArb = (pool: string[]) => fc.record(
  {
    cluster: pickArb(pool, 'missing-cluster'),
    user: pickArb(pool, 'missing-user'),
    namespace: fc.constantFrom('default', 'team-a', 'kube-system', 'off', ''),
    extensions: fc.array(extensionNoise, { maxLength: 1 }),
  },
  { requiredKeys: [] },
);

interface Entry {
  name: string;
  /** undefined: the entry has no body (`- name: x` only). */
  body: Record<string, unknown> | undefined;
}

const entriesArb = (pool: string[], bodyArb: fc.Arbitrary<Record<string, unknown>>, minLength = 0) =>
  fc
    .tuple(
      fc.uniqueArray(fc.record({ name: pickArb(pool, 'elsewhere'), body: fc.option(bodyArb, { freq: 6, nil: undefined }) }), { selector: (e) => e.name, minLength, maxLength: 3 }),
      // Now and then, a name defined twice in the same file (kubectl refuses the file).
      fc.oneof({ weight: 30, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.tuple(fc.nat(), bodyArb) }),
    )
    .map(([entries, dup]): Entry[] => {
      if (!dup || entries.length === 0) return entries;
      const [at, body] = dup;
      return [...entries, { name: entries[at % entries.length]!.name, body }];
    });

interface FileSpec {
  dir: string;
  format: 'yaml' | 'json' | 'empty' | 'comment';
  yamlStyle: { collectionStyle: 'any' | 'block' | 'flow'; defaultStringType: 'PLAIN' | 'QUOTE_DOUBLE' | 'QUOTE_SINGLE' };
  /** YAML: the second cluster / user body starts with `<<: *anchor` of the first (a YAML 1.1 merge key). */
  mergeKeys: boolean;
  header: boolean;
  clusters: Entry[];
  users: Entry[];
  contexts: Entry[];
  currentContext: string | undefined;
  noise: boolean;
  /** How an empty list is written: left out, `[]` or `null`. */
  emptyList: 'omit' | 'empty' | 'null';
  /**
   * The YAML version the emitter is told. 1.2 writes `on`, `y`, `1_000` plain, which kubectl
   * (YAML 1.1) reads as a boolean or a number.
   */
  yamlVersion: '1.1' | '1.2';
  /** Rarely, one field of the first body of a list (or `current-context`) holds a value of another type. */
  mistype: Mistype | undefined;
}

interface Mistype {
  list: 'clusters' | 'users' | 'contexts' | 'top';
  /** Dotted inside the body (`exec.args`). */
  field: string;
  value: unknown;
}

const MISTYPED_FIELDS: Record<Mistype['list'], string[]> = {
  clusters: ['server', 'certificate-authority', 'certificate-authority-data', 'insecure-skip-tls-verify', 'tls-server-name', 'proxy-url'],
  users: ['token', 'tokenFile', 'username', 'password', 'as', 'client-certificate', 'client-key-data', 'exec.command', 'exec.apiVersion', 'exec.args', 'exec.env', 'exec.provideClusterInfo', 'exec.interactiveMode', 'auth-provider.name'],
  contexts: ['cluster', 'user', 'namespace'],
  top: ['current-context'],
};
const mistypeArb: fc.Arbitrary<Mistype> = fc
  .constantFrom(...(Object.keys(MISTYPED_FIELDS) as Mistype['list'][]))
  .chain((list) => fc.record({
    list: fc.constant(list),
    field: fc.constantFrom(...MISTYPED_FIELDS[list]),
    value: fc.constantFrom<unknown>(15, 0, true, false, ['x'], { a: 'b' }, 'true', 1.5),
  }));

const fileArb = (pool: string[]): fc.Arbitrary<FileSpec> => fc.record({
  dir: fc.constantFrom(...CONFIG_DIRS),
  format: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom<FileSpec['format']>('yaml', 'json') },
    { weight: 1, arbitrary: fc.constantFrom<FileSpec['format']>('empty', 'comment') },
  ),
  yamlStyle: fc.record({
    collectionStyle: fc.constantFrom('any', 'block', 'flow'),
    defaultStringType: fc.constantFrom('PLAIN', 'QUOTE_DOUBLE', 'QUOTE_SINGLE'),
  }),
  mergeKeys: fc.boolean(),
  header: fc.boolean(),
  clusters: entriesArb(pool, clusterBodyArb),
  users: entriesArb(pool, userBodyArb),
  contexts: entriesArb(pool, contextBodyArb(pool), 1),
  currentContext: fc.option(pickArb(pool, 'no-such-context'), { freq: 8, nil: undefined }),
  noise: fc.boolean(),
  emptyList: fc.constantFrom('omit', 'empty', 'null'),
  yamlVersion: fc.constantFrom<FileSpec['yamlVersion']>('1.1', '1.1', '1.1', '1.2'),
  mistype: fc.option(mistypeArb, { freq: 8, nil: undefined }),
});

/** A `KUBECONFIG` item: one of the files (by absolute or relative path), a missing file, or an empty segment. */
type ListItem = { file: number; relative: boolean } | 'missing' | 'empty';

const scenarioArb = fc
  .uniqueArray(nameArb, { minLength: 1, maxLength: 4 })
  .chain((pool) => fc.array(fileArb(pool), { minLength: 1, maxLength: 3 }))
  .chain((files) =>
    fc.record({
      files: fc.constant(files),
      list: fc.array(
        fc.oneof(
          { weight: 16, arbitrary: fc.record({ file: fc.nat(files.length - 1), relative: fc.boolean() }) },
          { weight: 1, arbitrary: fc.constant<ListItem>('missing') },
          { weight: 1, arbitrary: fc.constant<ListItem>('empty') },
        ),
        { minLength: 1, maxLength: 5 },
      ),
    }),
  );
type Scenario = { files: FileSpec[]; list: ListItem[] };

// ---- writing a scenario -----------------------------------------------------------------------

const ORIGIN = 'converge.test/origin';

function fileName(i: number, spec: FileSpec): string {
  return join(spec.dir, `${i}-${spec.format === 'json' ? 'config.json' : 'kube config'}`);
}

/** The file's document, with a marker naming the file on each cluster and user that has a body. */
function documentOf(i: number, spec: FileSpec, runDir: string): Record<string, unknown> {
  const abs = (v: unknown): unknown =>
    typeof v === 'string' && v.startsWith(ABS) ? join(runDir, v.slice(ABS.length)) : Array.isArray(v) ? v.map(abs) : v;
  const list = (entries: Entry[], field: string, marked: boolean) => {
    if (entries.length === 0) return spec.emptyList === 'omit' ? undefined : spec.emptyList === 'null' ? null : [];
    return entries.map(({ name, body }, j) => {
      if (!body) return { name };
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(body)) out[k] = abs(v);
      if (marked) out.extensions = [...((body.extensions as unknown[]) ?? []), { name: ORIGIN, extension: { file: i, entry: j } }];
      return { name, [field]: out };
    });
  };
  const doc: Record<string, unknown> = {};
  if (spec.header) Object.assign(doc, { apiVersion: 'v1', kind: 'Config' });
  if (spec.noise) {
    doc.preferences = { colors: true, extensions: [{ name: 'p', extension: { x: 1 } }] };
    doc.extensions = [{ name: 'top', extension: { apiVersion: 'v1', kind: 'Top', y: 'z' } }];
  }
  const put = (key: string, value: unknown) => {
    if (value !== undefined) doc[key] = value;
  };
  put('clusters', list(spec.clusters, 'cluster', true));
  put('users', list(spec.users, 'user', true));
  put('contexts', list(spec.contexts, 'context', false));
  put('current-context', spec.currentContext);
  if (spec.mistype) mistype(doc, spec.mistype);
  return doc;
}

/** Puts the mistyped value in place, when the file has that list's first body (and, for `exec.x`, an exec). */
function mistype(doc: Record<string, unknown>, m: Mistype): void {
  if (m.list === 'top') {
    doc[m.field] = m.value;
    return;
  }
  const field = { clusters: 'cluster', users: 'user', contexts: 'context' }[m.list];
  const entries = doc[m.list];
  const first = Array.isArray(entries) ? (entries as Record<string, unknown>[]).find((e) => e[field] !== undefined) : undefined;
  if (!first) return;
  let target = first[field] as Record<string, unknown>;
  const path = m.field.split('.');
  for (const step of path.slice(0, -1)) {
    const next = target[step];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) return;
    target = next as Record<string, unknown>;
  }
  target[path.at(-1)!] = m.value;
}

/**
 * YAML as kubectl reads it (YAML 1.1: `yes`, `no`, `on`, `y`… are booleans there, so the emitter
 * is told 1.1 and quotes them), or JSON.
 */
function render(doc: Record<string, unknown>, spec: FileSpec): string {
  switch (spec.format) {
    case 'empty':
      return '';
    case 'comment':
      return '# nothing here\n\n';
    case 'json':
      return JSON.stringify(doc, null, spec.header ? 2 : undefined);
    case 'yaml':
      if (!spec.mergeKeys) return stringify(doc, { version: spec.yamlVersion, lineWidth: 0, ...spec.yamlStyle });
      return withMergeKeys(doc, spec.yamlVersion).toString({ lineWidth: 0, ...spec.yamlStyle });
  }
}

/**
 * The document with the second body of `clusters` and `users` merging the first one in, as
 * people write kubeconfigs by hand; kubectl (go-yaml v2) honours merge keys. `<<: *anchor` comes
 * first: go-yaml v2 applies keys in order, so that only then do the body's own keys win there too.
 */
function withMergeKeys(doc: Record<string, unknown>, version: '1.1' | '1.2'): Document {
  const d = new Document(doc, { version });
  for (const [list, field] of [['clusters', 'cluster'], ['users', 'user']] as const) {
    const seq = d.get(list, true);
    if (!isSeq(seq)) continue;
    const bodies = seq.items.flatMap((item): YAMLMap[] => {
      const body: unknown = isMap(item) ? item.get(field, true) : undefined;
      return isMap(body) ? [body] : [];
    });
    if (bodies.length < 2) continue;
    bodies[1]!.items.unshift(new Pair(new Scalar('<<'), d.createAlias(bodies[0]!, `${field}-base`)));
  }
  return d;
}

/**
 * Writes the files of a scenario, and every file a relative or absolute path may point to,
 * relative to every config folder (except the `missing` ones); each holds `@` and its own path
 * relative to `runDir`, so that `--flatten` tells which file kubectl read.
 */
function writeScenario(s: Scenario, runDir: string): { paths: string[]; kubeconfig: string } {
  const cfg = join(runDir, 'cfg');
  const targets = new Set<string>();
  for (const d of CONFIG_DIRS) for (const p of REL_PATHS) targets.add(resolve(cfg, d, p));
  for (const p of ABS_PATHS) targets.add(join(runDir, p.slice(ABS.length)));
  for (const t of targets) {
    if (relative(runDir, t).includes('missing')) continue;
    mkdirSync(dirname(t), { recursive: true });
    writeFileSync(t, `@${relative(runDir, t)}`);
  }
  const paths = s.files.map((spec, i) => {
    const path = join(cfg, fileName(i, spec));
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, render(documentOf(i, spec, runDir), spec));
    return path;
  });
  const kubeconfig = s.list
    .map((item) => (item === 'missing' ? join(cfg, 'not-there') : item === 'empty' ? '' : item.relative ? relative(process.cwd(), paths[item.file]!) : paths[item.file]!))
    .join(':');
  return { paths, kubeconfig };
}

// ---- running kubectl --------------------------------------------------------------------------

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function kubectl(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((res) => {
    execFile('kubectl', args, { env, timeout: 20_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      res({ code, stdout, stderr });
    });
  });
}

// ---- kubectl's output in our model ------------------------------------------------------------

type Raw = Record<string, unknown>;

function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

/** The folder of the file a kubectl entry came from (its origin marker), or undefined when unmarked. */
function originDir(body: Raw, paths: string[]): string | undefined {
  const ext = (body.extensions as { name: string; extension: { file: number } }[] | undefined)?.find((e) => e.name === ORIGIN);
  return ext ? dirname(paths[ext.extension.file]!) : undefined;
}

/** client-go's `ResolvePaths`: a non-empty relative path is joined to the defining file's folder. */
function resolver(base: string | undefined, what: string) {
  return (p: unknown): string | undefined => {
    const v = str(p);
    if (v === undefined || isAbsolute(v)) return v;
    assert.ok(base, `${what}: relative path ${v} but no origin marker`);
    return resolve(base, v);
  };
}

function expectedCluster(name: string, c: Raw, paths: string[]): KubeConfigCluster {
  const path = resolver(originDir(c, paths), `cluster ${name}`);
  return defined({
    name,
    server: str(c.server) ?? '',
    caData: str(c['certificate-authority-data']),
    caFile: path(c['certificate-authority']),
    skipTLSVerify: c['insecure-skip-tls-verify'] === true ? true : undefined,
    tlsServerName: str(c['tls-server-name']),
    proxyUrl: str(c['proxy-url']),
  });
}

function expectedUser(name: string, u: Raw, paths: string[]): KubeConfigUser {
  const base = originDir(u, paths);
  const path = resolver(base, `user ${name}`);
  const exec = u.exec as Raw | undefined;
  const provider = u['auth-provider'] as Raw | undefined;
  return defined({
    name,
    token: str(u.token),
    tokenFile: path(u.tokenFile),
    certData: str(u['client-certificate-data']),
    certFile: path(u['client-certificate']),
    keyData: str(u['client-key-data']),
    keyFile: path(u['client-key']),
    username: str(u.username),
    password: str(u.password),
    impersonateUser: str(u.as),
    impersonateGroups: (u['as-groups'] as string[] | undefined)?.length ? (u['as-groups'] as string[]) : undefined,
    impersonateUid: str(u['as-uid']),
    exec: exec
      ? defined({
          command: (exec.command as string).includes('/') ? path(exec.command)! : (exec.command as string),
          apiVersion: exec.apiVersion as string,
          args: (exec.args as string[] | null)?.length ? (exec.args as string[]) : undefined,
          env: (exec.env as { name: string; value: string }[] | null)?.length ? (exec.env as { name: string; value: string }[]) : undefined,
          installHint: str(exec.installHint),
          provideClusterInfo: exec.provideClusterInfo === true ? true : undefined,
          interactiveMode: str(exec.interactiveMode),
        })
      : undefined,
    authProvider: provider ? defined({ name: String(provider.name ?? ''), config: Object.keys((provider.config as object | undefined) ?? {}).length ? (provider.config as Record<string, string>) : undefined }) : undefined,
  });
}

function expectedContext(name: string, c: Raw): KubeConfigContext {
  return defined({ name, cluster: str(c.cluster) ?? '', user: str(c.user) ?? '', namespace: str(c.namespace) });
}

/** Ours, with the differences that are not differences (see the module comment) taken out. */
function comparableUser(u: KubeConfigUser, kubectlSays: KubeConfigUser): KubeConfigUser {
  let exec = u.exec;
  if (exec) {
    exec = defined({ ...exec, args: exec.args?.length ? exec.args : undefined, env: exec.env?.length ? exec.env : undefined, installHint: exec.installHint || undefined });
    // kubectl defaults interactiveMode to IfAvailable for v1beta1 (client-go's SetDefaults_ExecConfig).
    if (exec.interactiveMode === undefined && kubectlSays.exec?.interactiveMode === 'IfAvailable' && !exec.apiVersion.endsWith('/v1')) exec.interactiveMode = 'IfAvailable';
  }
  const authProvider = u.authProvider && defined({ ...u.authProvider, config: u.authProvider.config && Object.keys(u.authProvider.config).length ? u.authProvider.config : undefined });
  return defined({ ...u, exec, authProvider });
}

function byName<T extends { name: string }>(items: T[]): Map<string, T> {
  return new Map(items.map((i) => [i.name, i]));
}

// ---- the comparison ---------------------------------------------------------------------------

let counter = 0;

async function compare(s: Scenario, root: string, home: string): Promise<void> {
  const runDir = join(root, `run-${counter++}`);
  mkdirSync(runDir);
  try {
    const { paths, kubeconfig } = writeScenario(s, runDir);
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, KUBECONFIG: kubeconfig };
    const [view, current, minify] = await Promise.all([
      kubectl(['config', 'view', '--raw', '-o', 'json'], env),
      kubectl(['config', 'current-context'], env),
      kubectl(['config', 'view', '--minify', '--raw', '-o', 'json'], env),
    ]);
    // Only worth running when the current context resolves (else it fails as --minify did).
    const flat = minify.code === 0 ? await kubectl(['config', 'view', '--minify', '--flatten', '-o', 'json'], env) : undefined;

    let kc: KubeConfig | undefined;
    let loadError: unknown;
    try {
      kc = loadKubeConfig(undefined, { env: { KUBECONFIG: kubeconfig }, homeDir: home, serviceAccountDir: join(root, 'no-sa') });
    } catch (err) {
      loadError = err;
    }

    // 1. Loading and merging.
    if (view.code !== 0) {
      const file = /error loading config file "([^"]*)"/.exec(view.stderr)?.[1];
      assert.ok(file, `kubectl failed without naming a file: ${view.stderr}`);
      assert.ok(loadError instanceof KubeConfigError, `kubectl refuses ${file} (${view.stderr.trim()}), ours loaded it${kc ? '' : `: ${String(loadError)}`}`);
      assert.ok(loadError.message.includes(file) || loadError.message.includes(resolve(file)), `our error names the file kubectl refuses (${file}): ${loadError.message}`);
      return;
    }
    const merged = JSON.parse(view.stdout) as Raw;
    const clusters = ((merged.clusters as { name: string; cluster: Raw }[] | null) ?? []).map((c) => expectedCluster(c.name, c.cluster, paths));
    const users = ((merged.users as { name: string; user: Raw }[] | null) ?? []).map((u) => expectedUser(u.name, u.user, paths));
    const contexts = ((merged.contexts as { name: string; context: Raw }[] | null) ?? []).map((c) => expectedContext(c.name, c.context));
    if (clusters.length + users.length + contexts.length === 0) {
      // Deliberate: nothing usable in the files → ours looks in-cluster (not in a pod here) and fails.
      assert.ok(loadError instanceof KubeConfigError && /no kubeconfig found/.test(loadError.message), `empty merge: expected "no kubeconfig found", got ${String(loadError ?? 'a config')}`);
      return;
    }
    assert.ok(kc, `kubectl loads the files, ours throws: ${String(loadError)}`);
    assert.deepEqual([...byName(kc.clusters).keys()].sort(), clusters.map((c) => c.name).sort(), 'cluster names');
    assert.deepEqual([...byName(kc.users).keys()].sort(), users.map((u) => u.name).sort(), 'user names');
    assert.deepEqual([...byName(kc.contexts).keys()].sort(), contexts.map((c) => c.name).sort(), 'context names');
    for (const c of clusters) assert.deepEqual(kc.getCluster(c.name), c, `cluster ${JSON.stringify(c.name)}`);
    for (const u of users) assert.deepEqual(comparableUser(kc.getUser(u.name)!, u), u, `user ${JSON.stringify(u.name)}`);
    for (const c of contexts) assert.deepEqual(kc.getContextObject(c.name), c, `context ${JSON.stringify(c.name)}`);
    assert.equal(kc.getCurrentContext(), (merged['current-context'] as string | undefined) ?? '', 'current-context (view)');

    // 2. `kubectl config current-context`.
    if (current.code === 0) assert.equal(kc.getCurrentContext(), current.stdout.replace(/\n$/, ''), 'current-context');
    else {
      assert.match(current.stderr, /current-context is not set/);
      assert.equal(kc.getCurrentContext(), '', 'current-context');
    }

    // 3. The current context resolved.
    const credentialsError = () => {
      try {
        new Credentials(kc);
        return undefined;
      } catch (err) {
        return err as Error;
      }
    };
    if (minify.code !== 0) {
      const err = credentialsError();
      assert.ok(err instanceof KubeConfigError, `kubectl cannot resolve the current context (${minify.stderr.trim()}), ours can`);
      const context = kc.getContextObject(kc.getCurrentContext());
      let m: RegExpExecArray | null;
      if (/current-context must exist in order to minify/.test(minify.stderr)) {
        assert.match(err.message, /has no current context/);
      } else if ((m = /cannot locate context (.*)\n/.exec(minify.stderr))) {
        assert.equal(m[1], kc.getCurrentContext());
        assert.equal(context, null);
        assert.ok(err.message.includes(`the current context "${m[1]}" is not defined`), err.message);
      } else if ((m = /cannot locate cluster (.*)\n/.exec(minify.stderr))) {
        assert.equal(m[1], context?.cluster);
        assert.equal(kc.getCluster(m[1]!), null);
        assert.ok(err.message.includes(`names cluster "${m[1]}", which is not defined`), err.message);
      } else if ((m = /cannot locate user (.*)\n/.exec(minify.stderr))) {
        assert.equal(m[1], context?.user);
        assert.equal(kc.getUser(m[1]!), null);
        // A context without a cluster: kubectl's --minify passes over it, ours refuses it first.
        if (context!.cluster === '') assert.ok(err.message.includes('names cluster "", which is not defined'), err.message);
        else assert.ok(err.message.includes(`names user "${m[1]}", which is not defined`), err.message);
      } else {
        assert.fail(`unexpected kubectl --minify error: ${minify.stderr}`);
      }
      return;
    }
    const min = JSON.parse(minify.stdout) as Raw;
    assert.equal(min['current-context'], kc.getCurrentContext());
    const [ctxRaw] = min.contexts as { name: string; context: Raw }[];
    assert.deepEqual(kc.getContextObject(kc.getCurrentContext()), expectedContext(ctxRaw!.name, ctxRaw!.context), 'current context');
    const context = kc.getContextObject(kc.getCurrentContext())!;
    const [clusterRaw] = (min.clusters as { name: string; cluster: Raw }[] | null) ?? [];
    const [userRaw] = (min.users as { name: string; user: Raw }[] | null) ?? [];
    assert.deepEqual(kc.getCurrentCluster(), clusterRaw ? expectedCluster(clusterRaw.name, clusterRaw.cluster, paths) : null, 'current cluster');
    const user = userRaw ? expectedUser(userRaw.name, userRaw.user, paths) : null;
    const ours = kc.getCurrentUser();
    assert.deepEqual(ours && user ? comparableUser(ours, user) : ours, user, 'current user');
    const err = credentialsError();
    if (err) {
      // kubectl resolves it; ours may still refuse it (no server, a file it cannot read, …), but not for a name.
      assert.ok(err instanceof KubeConfigError, String(err));
      if (context.cluster !== '') assert.doesNotMatch(err.message, /is not defined|no current context/);
    }

    // 4. Where kubectl reads the CA, client certificate and key (only the current context's).
    const cluster = kc.getCurrentCluster();
    const usr = kc.getCurrentUser();
    assert.ok(flat);
    if (flat.code === 0) {
      const f = JSON.parse(flat.stdout) as Raw;
      const read = (data: unknown) => (typeof data === 'string' ? Buffer.from(data, 'base64').toString('utf8') : undefined);
      const location = (data: unknown) => {
        const text = read(data);
        return text?.startsWith('@') ? join(runDir, text.slice(1)) : undefined;
      };
      const fc0 = ((f.clusters as { cluster: Raw }[] | null) ?? [])[0]?.cluster;
      const fu0 = ((f.users as { user: Raw }[] | null) ?? [])[0]?.user;
      if (cluster?.caFile) assert.equal(location(fc0?.['certificate-authority-data']), cluster.caFile, 'certificate-authority read by kubectl');
      if (usr?.certFile) assert.equal(location(fu0?.['client-certificate-data']), usr.certFile, 'client-certificate read by kubectl');
      if (usr?.keyFile) assert.equal(location(fu0?.['client-key-data']), usr.keyFile, 'client-key read by kubectl');
    } else if (/no such file or directory/.test(flat.stderr)) {
      const missing = /open (.*): no such file or directory/.exec(flat.stderr)?.[1];
      assert.ok(missing && !existsSync(missing), flat.stderr);
      assert.ok([cluster?.caFile, usr?.certFile, usr?.keyFile].includes(missing), `kubectl could not open ${missing}; ours resolved ${JSON.stringify([cluster?.caFile, usr?.certFile, usr?.keyFile])}`);
    } else {
      assert.match(flat.stderr, /cannot have values for both path and contents/);
    }
  } finally {
    rmSync(runDir, { recursive: true, force: true });
  }
}

describe('what the differential test found (shrunk counterexamples; no kubectl needed)', () => {
  it('honours YAML merge keys, as kubectl does', () => {
    const d = mkdtempSync(join(tmpdir(), 'converge-kubectl-diff-'));
    try {
      const file = join(d, 'config');
      writeFileSync(file, 'users:\n  - name: prod\n    user: &base\n      client-key-data: AA==\n  - name: other\n    user:\n      <<: *base\n      client-key: ca.pem\n');
      const kc = loadKubeConfig(undefined, { env: { KUBECONFIG: file }, homeDir: d });
      assert.deepEqual(kc.getUser('other'), { name: 'other', keyData: 'AA==', keyFile: join(d, 'ca.pem') });
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });

  it('refuses a field of the wrong type and reads YAML 1.1 scalars, as kubectl does (never echoing the value)', () => {
    const d = mkdtempSync(join(tmpdir(), 'converge-kubectl-diff-'));
    try {
      const file = join(d, 'config');
      const load = (text: string) => {
        writeFileSync(file, text);
        return loadKubeConfig(undefined, { env: { KUBECONFIG: file }, homeDir: d });
      };
      assert.throws(() => load('contexts:\n  - name: prod\n    context: {cluster: 15}\n'), { name: 'KubeConfigError', message: `${file}: contexts[prod].context.cluster must be a string, not a number (kubectl refuses the file too)` });
      assert.throws(() => load('users:\n  - name: u\n    user: {token: 12345}\ncontexts: [{name: c}]\n'), (err: Error) => /users\[u\]\.user\.token must be a string, not a number/.test(err.message) && !err.message.includes('12345'));
      assert.throws(() => load('clusters:\n  - name: a\n    cluster: {insecure-skip-tls-verify: "true"}\ncontexts: [{name: c}]\n'), /insecure-skip-tls-verify must be true or false, not a string/);
      // YAML 1.1, as go-yaml v2 reads it: a plain `on` is a boolean, `0123` an octal number.
      assert.throws(() => load('contexts:\n  - name: c\n    context: {namespace: on}\n'), /namespace must be a string, not a boolean/);
      assert.throws(() => load('contexts:\n  - name: c\n    context: {namespace: 0123}\n'), /namespace must be a string, not a number/);
      // Timestamps and sexagesimals stay strings, as go-yaml v2 keeps them for untyped values.
      assert.equal(load('contexts:\n  - name: c\n    context: {namespace: 2026-12-05, user: 1:20}\ncurrent-context: c\n').getContextObject('c')?.namespace, '2026-12-05');
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });

  it('refuses a file that names a context (cluster, user) twice, as kubectl does', () => {
    const d = mkdtempSync(join(tmpdir(), 'converge-kubectl-diff-'));
    try {
      const file = join(d, 'config');
      writeFileSync(file, 'contexts:\n  - name: prod\n  - name: prod\n    context: {}\n');
      assert.throws(() => loadKubeConfig(undefined, { env: { KUBECONFIG: file }, homeDir: d }), {
        name: 'KubeConfigError',
        message: `${file}: contexts[1] repeats the name "prod" (kubectl refuses duplicate names)`,
      });
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});

describe('kubeconfig loading, differentially against kubectl', { skip: hasKubectl ? false : 'kubectl is not on PATH' }, () => {
  let root = '';
  let home = '';
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'converge-kubectl-diff-'));
    home = join(root, 'home');
    mkdirSync(home);
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it(`merges, resolves and refuses as kubectl does (${RUNS} runs)`, { timeout: 300_000 }, async () => {
    await fc.assert(fc.asyncProperty(scenarioArb, (s) => compare(s, root, home)), { numRuns: RUNS });
  });
});
