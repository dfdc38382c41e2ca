/**
 * TypeDoc plugin (typedoc.json `plugin`): `validation.notExported` for the workspace's packages.
 *
 * TypeDoc's own check warns about a type the documented API refers to but the entry points do
 * not export only when the type belongs to the project's package, which TypeDoc takes from the
 * package.json above the entry points: here the workspace root's (`converge-monorepo`), to which
 * no documented type belongs. Every type of `@converge/runtime` and `@converge/envtest` therefore
 * counted as external and the check found nothing. This plugin does the same check for every
 * package of an entry point: with `validation.notExported` on, a type of one of them that the
 * documentation refers to without documenting it (so the reference cannot be linked, and a user
 * cannot import it) is a validation warning, e.g. "ForOptions, defined in
 * @converge/runtime/src/controller/builder.ts, is referenced by
 * @converge/runtime.ControllerBuilder.for.options but not included in the documentation".
 * `intentionallyNotExported` is honoured (`Name` or `path/to/file.ts:Name`). No effect on the output.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Application } from 'typedoc';
import { makeRecursiveVisitor } from 'typedoc/models';

/** The `name` of the nearest package.json at or above `file`'s folder. */
function packageNameOf(file) {
  for (let dir = dirname(resolve(file)); ; dir = dirname(dir)) {
    try {
      return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name;
    } catch {
      if (dirname(dir) === dir) return undefined;
    }
  }
}

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.on(Application.EVENT_VALIDATE_PROJECT, (project) => {
    if (!app.options.getValue('validation').notExported) return;
    const own = new Set(app.options.getValue('entryPoints').map(packageNameOf).filter(Boolean));
    const intentional = app.options.getValue('intentionallyNotExported');
    const allowed = (type) => intentional.some((entry) => {
      const at = entry.lastIndexOf(':');
      if (at === -1) return entry === type.qualifiedName;
      return entry.slice(at + 1) === type.qualifiedName && `${type.symbolId.packageName}/${type.symbolId.packagePath}`.endsWith(entry.slice(0, at));
    });
    const warned = new Set();
    let owner;
    const visitor = makeRecursiveVisitor({
      reference(type) {
        if (type.reflection || type.externalUrl || type.isIntentionallyBroken() || !own.has(type.package)) return;
        const id = type.symbolId?.getStableKey();
        if (!id || warned.has(id) || allowed(type)) return;
        warned.add(id);
        app.logger.validationWarning(
          `${type.qualifiedName}, defined in ${type.symbolId.packageName}/${type.symbolId.packagePath}, is referenced by ${owner.getFriendlyFullName()} but not included in the documentation`,
        );
      },
    });
    for (const reflection of Object.values(project.reflections)) {
      owner = reflection;
      for (const type of [reflection.type, reflection.default, reflection.overwrites, ...(reflection.implementedTypes ?? [])]) {
        if (type && typeof type.visit === 'function') type.visit(visitor);
      }
    }
  });
}
