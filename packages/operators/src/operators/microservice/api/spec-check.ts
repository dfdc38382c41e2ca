/**
 * `checkMicroserviceSpec`: the problems with a v1 spec, in the API server's words where possible.
 * The API server enforces all of it (schema bounds and CEL rules), so a non-empty answer means the
 * object bypassed validation (written before a rule existed, or converted from an old version).
 *
 * The shape is checked by the validator TypeBox's compiler made from `MicroserviceSpecSchema`
 * ahead of time (`../../compiled-checks/`), so checking a valid spec loads no schema; TypeBox is
 * loaded only to say what is wrong with an invalid one. Pure.
 * @module
 */
import { countsCharacters, explainFailure, passes } from '../../compiled-checks/index.ts';
import type { EnvVar } from './v1.ts';
import { PLATFORM_ENV_NAMES } from './constants.ts';
import { isValidImageReference } from './image-reference.ts';
import { SECRET_KEY_DOTS_MESSAGE, isDotSecretKey } from './secret-key.ts';

/** Every problem of `spec` as `spec.<path>: what` lines; empty when valid. */
export function checkMicroserviceSpec(spec: unknown): string[] {
  // Lengths as the API server counts them (characters, not UTF-16 units): a value it stored is not
  // "too long" here (test/integration/microservice/spec-check-differential.test.ts).
  const problems: string[] = passes('microserviceSpec', spec)
    ? []
    : explainFailure('microserviceSpec', spec)
        .filter((e) => !countsCharacters(e))
        .map((e) => `spec${e.path.replaceAll('/', '.')}: ${e.message}`);
  const container = (spec as { container?: { image?: unknown; env?: unknown } } | null | undefined)?.container;
  if (typeof container?.image === 'string' && container.image.length > 0 && !isValidImageReference(container.image)) {
    problems.push('spec.container.image: must be a valid image reference such as ghcr.io/org/app:1.0.0');
  }
  if (Array.isArray(container?.env)) {
    const seen = new Set<string>();
    for (const [i, e] of (container.env as (EnvVar | null)[]).entries()) {
      // Not an object (a null item a v1alpha1 client's v1-fields annotation can carry past the
      // API server's schema): the compiled check above already says "Expected object".
      if (typeof e !== 'object' || e === null) continue;
      if ((PLATFORM_ENV_NAMES as readonly string[]).includes(e.name)) problems.push(`spec.container.env[${i}].name: ${e.name} is set by the platform`);
      if (seen.has(e.name)) problems.push(`spec.container.env[${i}].name: ${e.name} appears twice`);
      seen.add(e.name);
      if ((e.value === undefined) === (e.valueFrom === undefined)) problems.push(`spec.container.env[${i}]: give exactly one of value and valueFrom`);
      const key: unknown = e.valueFrom?.secretKeyRef?.key;
      if (typeof key === 'string' && isDotSecretKey(key)) problems.push(`spec.container.env[${i}].valueFrom.secretKeyRef.key: ${SECRET_KEY_DOTS_MESSAGE}`);
    }
  }
  return problems;
}
