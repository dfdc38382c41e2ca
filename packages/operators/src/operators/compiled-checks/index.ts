/**
 * Validators compiled ahead of time from the operators' TypeBox schemas, so that the operator
 * process checks its configuration and every Microservice spec without loading TypeBox or a
 * schema (≈ 250 modules and ≈ 3 MiB of RSS, issue 17; ADR 0035). The late-create sweep reads its
 * ledger's entries with one too.
 *
 * `checks.generated.ts` holds, per schema, the check function TypeBox's own compiler
 * (`TypeCompiler.Code`) writes for it, and the schema itself as a literal built only when asked
 * for. `scripts/generate-checks.ts` writes it (`npm run generate:checks`); a test fails when it is
 * stale, and a property test holds every compiled check to `Value.Check` on the source schema.
 *
 * What a caller can rely on:
 * - `passes(name, value)` is exactly `Value.Check(schema, value)` for the committed schemas, and
 *   loads nothing;
 * - `explainFailure(name, value)` is `Value.Errors(schema, value)`: it loads TypeBox's `Value`
 *   (once, on the first failure) to say what is wrong, in TypeBox's words, as before.
 * - `countsCharacters(error)` tells a `maxLength` failure that only TypeBox sees: it counts UTF-16
 *   units, kube-apiserver counts characters (code points), so a string of emoji can be too long
 *   for one and not for the other. Checks of objects the API server validated drop those.
 * @module
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { TSchema } from '@sinclair/typebox';
import type { ValueError } from '@sinclair/typebox/value';
import { compiledChecks, compiledSchemas } from './checks.generated.ts';

/** The schemas with a compiled check: the v1 Microservice spec, the three parts of the operator configuration, an entry of the late-create ledger. */
export const CHECK_NAMES = ['microserviceSpec', 'operatorConfigFile', 'platformDefaults', 'providerConfig', 'lateCreateEntry'] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

const checks = compiledChecks as Record<CheckName, (value: unknown) => boolean>;
const schemas = compiledSchemas as Record<CheckName, () => TSchema>;
const built = new Map<CheckName, TSchema>();

/** Whether `value` matches the named schema (the compiled `Value.Check`). */
export function passes(name: CheckName, value: unknown): boolean {
  return checks[name](value);
}

/** The named schema, as TypeBox built it (from the generated literal; built once, on first use). */
export function schemaOf(name: CheckName): TSchema {
  let schema = built.get(name);
  if (!schema) built.set(name, (schema = schemas[name]()));
  return schema;
}

/** `Value.Errors(schemaOf(name), value)`, all of them. */
export function explainFailure(name: CheckName, value: unknown): ValueError[] {
  return valueErrors(schemaOf(name), value);
}

let value: typeof import('@sinclair/typebox/value') | undefined;

/** `Value.Errors(schema, value)`, with TypeBox's `Value` loaded on first use (the ESM entry, as `import` would load it). */
export function valueErrors(schema: TSchema, input: unknown): ValueError[] {
  value ??= createRequire(import.meta.url)(fileURLToPath(import.meta.resolve('@sinclair/typebox/value'))) as typeof import('@sinclair/typebox/value');
  return [...value.Value.Errors(schema, input)];
}

/**
 * True when `error` is a `maxLength` failure that goes away counted in characters (code points),
 * as kube-apiserver counts `maxLength`; TypeBox counts UTF-16 units, two per character outside
 * the BMP. Only for errors from `explainFailure`/`valueErrors` (TypeBox is loaded then).
 */
export function countsCharacters(error: ValueError): boolean {
  const maxLength = (error.schema as { maxLength?: unknown }).maxLength;
  return (
    error.type === value!.ValueErrorType.StringMaxLength &&
    typeof error.value === 'string' &&
    typeof maxLength === 'number' &&
    [...error.value].length <= maxLength
  );
}
