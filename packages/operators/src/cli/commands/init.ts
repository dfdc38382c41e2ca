/**
 * `converge init <dir>`: a new operator project on `@converge/runtime`, the way Kubebuilder's
 * `init` + `create api` start one: a TypeBox schema for one kind (CRD and types from it), a
 * reconciler that converges a sample, the wiring, a test on a real local control plane, and a
 * README with the two commands. Refuses a file or a non-empty directory; writes nothing on bad
 * input, and the project whole or not at all (staged beside the target, then renamed into place).
 *
 * Guarantees: when writing fails, what this run put there is removed again (its stage, the entries
 * it had moved into an existing target, the missing parents of the target it created) and the
 * message says which: `nothing written` only when nothing was put in place, `removed what it had
 * written in <dir>, nothing is left` after a rollback, and the paths themselves when some cannot
 * be removed.
 * Caveats: a parent is removed only while empty (`rmdir`), so one that another process wrote into
 * meanwhile is kept and named.
 * @module
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { parseCommandArgs } from '../shared/command-args.ts';
import { assetDir } from '../shared/package-assets.ts';
import { processIO } from '../shared/kubectl.ts';
import type { CommandIO } from '../shared/kubectl.ts';
import { ScaffoldInputError, renderScaffold } from '../scaffold/render-scaffold.ts';

const HELP = `Usage: converge init <dir> [--kind <Kind>] [--group <group>] [--version <v>] [--name <package>]

Create a new operator project in <dir> (which must not exist or be empty):
a TypeBox schema for one kind, its CRD, a reconciler, a test on a local control plane,
and a README. Then: cd <dir> && npm install && npm test

Options:
  --kind <Kind>        the kind, CamelCase (default Widget)
  --group <group>      the API group, a DNS subdomain (default example.com)
  --version <v>        the API version (default v1alpha1)
  --name <package>     the npm package name (default: the directory's name)
  -h, --help           show this help
`;

function ownVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return manifest.version;
}

/** The file system calls that put the project in place (a seam: tests make one of them fail). */
export interface InitFs {
  mkdirSync: typeof mkdirSync;
  writeFileSync: typeof writeFileSync;
  renameSync: typeof renameSync;
  rmdirSync: typeof rmdirSync;
  rmSync: typeof rmSync;
}

const nodeFs: InitFs = { mkdirSync, writeFileSync, renameSync, rmdirSync, rmSync };

export async function run(argv: string[], io: CommandIO = processIO, fs: InitFs = nodeFs): Promise<number> {
  const parsed = parseCommandArgs('init', HELP, argv, {
    kind: { type: 'string', default: 'Widget' },
    group: { type: 'string', default: 'example.com' },
    version: { type: 'string', default: 'v1alpha1' },
    name: { type: 'string' },
  }, true, io);
  if (parsed.exitCode !== undefined) return parsed.exitCode;
  const [target, ...extra] = parsed.positionals;
  if (!target || extra.length) {
    io.stderr(`converge init: give exactly one directory\n\n${HELP}`);
    return 2;
  }
  const dir = resolve(target);
  if (existsSync(dir) && !statSync(dir).isDirectory()) {
    io.stderr(`converge init: ${dir} is a file, not a directory; choose a new directory\n`);
    return 1;
  }
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    io.stderr(`converge init: ${dir} exists and is not empty; choose a new directory\n`);
    return 1;
  }
  const { values } = parsed;
  let files: Map<string, string>;
  try {
    files = renderScaffold({
      name: values.name ?? basename(dir).toLowerCase(),
      group: values.group,
      version: values.version,
      kind: values.kind,
      runtimeVersion: ownVersion(),
    }, join(assetDir('templates'), 'init'));
  } catch (err) {
    if (err instanceof ScaffoldInputError) {
      // One line, every problem in it (the scaffold lists them one per line).
      io.stderr(`converge init: nothing written: ${err.message.split('\n').join('; ')}\n`);
      return 2;
    }
    throw err;
  }
  // Written whole or not at all: into a staging directory, then moved into place — the whole stage
  // renamed to a target that does not exist yet; into an existing (empty) target, which may be a
  // mount point or the shell's working directory, each top-level entry moved out of a stage inside it.
  const exists = existsSync(dir);
  const staging = exists ? join(dir, `.converge-init-${process.pid}`) : `${dir}.converge-init-${process.pid}`;
  /** What this run put in place, removed again if it fails: the first parent it created, the entries moved into `dir`. */
  let createdParent: string | undefined;
  const moved: string[] = [];
  try {
    // The stage with the target's missing parents: mkdir returns the first directory it made, so
    // that a failure can remove the parents again.
    const first = fs.mkdirSync(staging, { recursive: true });
    if (first !== undefined && first !== staging) createdParent = first;
    for (const [rel, content] of files) {
      const path = join(staging, rel);
      fs.mkdirSync(dirname(path), { recursive: true });
      fs.writeFileSync(path, content);
    }
    if (!exists) fs.renameSync(staging, dir);
    else {
      for (const entry of readdirSync(staging)) {
        fs.renameSync(join(staging, entry), join(dir, entry));
        moved.push(join(dir, entry));
      }
      fs.rmdirSync(staging);
    }
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const where = e.path ? ` ${e.path.startsWith(staging) ? dir + e.path.slice(staging.length) : e.path}` : '';
    const left = rollBack(fs, staging, moved, createdParent, dirname(staging));
    const outcome =
      left.length > 0 ? `could not remove what it had written: ${left.join(', ')} (remove ${left.length === 1 ? 'it' : 'them'} by hand)`
      : moved.length > 0 || createdParent ? `removed what it had written in ${createdParent ?? dir}, nothing is left`
      : 'nothing written';
    io.stderr(`converge init: cannot write${where}: ${describeFsError(e)}; ${outcome}\n`);
    return 1;
  }
  io.stdout(`created ${files.size} files in ${dir}\n\nNext:\n  cd ${target}\n  npm install\n  npm test     # the operator's tests on a local control plane\n  npm start    # the operator, its CRD and a sample on a local control plane\n`);
  return 0;
}

/**
 * Removes what a failed run put in place: the entries it moved into the target, its stage, and the
 * parents it created (`createdParent` down to `deepest`, deepest first, each only while empty).
 * Returns what could not be removed; never throws.
 */
function rollBack(fs: InitFs, staging: string, moved: readonly string[], createdParent: string | undefined, deepest: string): string[] {
  const left: string[] = [];
  const remove = (path: string, how: () => void) => {
    try {
      how();
    } catch {
      left.push(path);
    }
  };
  for (const path of moved) remove(path, () => fs.rmSync(path, { recursive: true, force: true }));
  remove(staging, () => fs.rmSync(staging, { recursive: true, force: true }));
  if (createdParent) {
    for (let p = deepest; ; p = dirname(p)) {
      remove(p, () => fs.rmdirSync(p));
      if (p === createdParent || dirname(p) === p) break;
    }
  }
  return left;
}

/** A file system error in words, with its code: `permission denied (EACCES)`. */
function describeFsError(e: NodeJS.ErrnoException): string {
  const words: Record<string, string> = { EACCES: 'permission denied', EPERM: 'not permitted', ENOTDIR: 'a part of the path is a file, not a directory', ENOSPC: 'no space left on the device', EROFS: 'a read-only file system', EEXIST: 'it exists already' };
  return e.code ? `${words[e.code] ?? e.message} (${e.code})` : e.message;
}
