/**
 * `converge init` as a pure function: the files of a new operator project, rendered from the
 * templates in `templates/init/` (shipped with the package) and the names the user chose.
 *
 * Guarantees: deterministic (same input, same files); every name is validated first, with a
 * message naming the flag to change, so nothing is written for bad input; the rendered project
 * depends only on published packages (`@converge/runtime`, `@converge/envtest`) and type-checks
 * as rendered (the scaffold test runs its `npm run typecheck` and `npm test`).
 * @module
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface ScaffoldInput {
  /** Project (npm package) name. */
  name: string;
  /** API group, a DNS subdomain with a dot, e.g. `example.com`. */
  group: string;
  /** API version, e.g. `v1alpha1`. */
  version: string;
  /** Kind in CamelCase, e.g. `Widget`. */
  kind: string;
  /** Version of @converge/runtime and @converge/envtest to depend on. */
  runtimeVersion: string;
}

export class ScaffoldInputError extends Error {
  override readonly name = 'ScaffoldInputError';
}

const KIND = /^[A-Z][A-Za-z0-9]{0,62}$/;
const GROUP = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
const VERSION = /^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$/;
const PACKAGE_NAME = /^(@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/;

/** The English plural of a lower-cased kind, as Kubebuilder guesses it (override with --plural later by editing). */
export function pluralOf(singular: string): string {
  if (/(s|x|z|ch|sh)$/.test(singular)) return `${singular}es`;
  if (/[^aeiou]y$/.test(singular)) return `${singular.slice(0, -1)}ies`;
  return `${singular}s`;
}

/** Every problem with the input, each naming its flag; empty when valid. */
export function checkScaffoldInput(input: ScaffoldInput): string[] {
  const problems: string[] = [];
  if (!PACKAGE_NAME.test(input.name) || input.name.length > 214) problems.push(`--name ${JSON.stringify(input.name)}: not a valid npm package name (lower case, no spaces)`);
  if (!GROUP.test(input.group) || input.group.length > 253) problems.push(`--group ${JSON.stringify(input.group)}: must be a DNS subdomain with at least one dot, e.g. example.com`);
  if (!VERSION.test(input.version)) problems.push(`--version ${JSON.stringify(input.version)}: must look like v1, v1beta1 or v1alpha1`);
  if (!KIND.test(input.kind)) problems.push(`--kind ${JSON.stringify(input.kind)}: must be CamelCase starting with an upper-case letter, e.g. Widget`);
  return problems;
}

/** Relative path → content of every file of the new project. */
export function renderScaffold(input: ScaffoldInput, templateDir: string): Map<string, string> {
  const problems = checkScaffoldInput(input);
  if (problems.length) throw new ScaffoldInputError(problems.join('\n'));
  const singular = input.kind.toLowerCase();
  const vars: Record<string, string> = { ...input, singular, plural: pluralOf(singular) };
  const files = new Map<string, string>();
  for (const file of walk(templateDir)) {
    const rel = relative(templateDir, file).split('\\').join('/');
    const target = rel
      .replace(/\.tmpl$/, '')
      .replace(/(^|\/)gitignore$/, '$1.gitignore')
      .replace(/(^|\/)resource\.(ts|json)$/, `$1${singular}.$2`);
    const text = readFileSync(file, 'utf8').replace(/\{\{(\w+)\}\}/g, (whole, key: string) => {
      const value = vars[key];
      if (value === undefined) throw new Error(`template ${rel}: unknown placeholder ${whole}`);
      return value;
    });
    files.set(target, text);
  }
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}
