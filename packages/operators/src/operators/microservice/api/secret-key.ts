/**
 * Secret keys as the API server checks them in a Pod's `secretKeyRef.key` (apimachinery
 * `IsConfigMapKey`): 1 to 253 of `[-._a-zA-Z0-9]`, and neither `.` nor `..` nor anything starting
 * with `..` (a key can be a file name in a volume). The CRD says the characters and the length
 * with `pattern` and `maxLength` (checked by the compiled validator) and the dots with
 * `SECRET_KEY_DOTS_RULE` (CEL, `v1.ts`); `spec-check.ts` repeats the CEL rule with `isDotSecretKey`.
 * The rule is written without backslashes, so the same text works in a single-quoted CEL string.
 * Pure; loads no schema.
 * @module
 */

export const SECRET_KEY_PATTERN = '^[-._a-zA-Z0-9]+$';
export const SECRET_KEY_MAX_LENGTH = 253;

/** CEL on the key: true when the API server would accept its dots. */
export const SECRET_KEY_DOTS_RULE = "self != '.' && !self.startsWith('..')";
/** What a person reads when `SECRET_KEY_DOTS_RULE` fails (and what `checkMicroserviceSpec` says). */
export const SECRET_KEY_DOTS_MESSAGE = "a Secret key must not be '.' or '..' or start with '..' (the API server refuses it in a Pod)";

/** True when `key` is `.`, `..` or starts with `..`: a key the API server refuses whatever its characters. */
export function isDotSecretKey(key: string): boolean {
  return key === '.' || key.startsWith('..');
}
