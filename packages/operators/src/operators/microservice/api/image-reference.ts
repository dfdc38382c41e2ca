/**
 * Container image references (`[registry[:port]/]repository[:tag][@digest]`), following the
 * grammar of github.com/distribution/reference. The pattern is written without backslashes,
 * lookaround or backreferences, so the same text works as a JavaScript RegExp, as Go RE2 in an
 * OpenAPI `pattern`, and inside a single-quoted CEL string (`self.matches('…')`).
 * @module
 */

const DOMAIN_COMPONENT = '[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?';
const DOMAIN = `${DOMAIN_COMPONENT}([.]${DOMAIN_COMPONENT})*([:][0-9]+)?`;
const PATH_COMPONENT = '[a-z0-9]+(([.]|_|__|-+)[a-z0-9]+)*';
const TAG = '[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127}';
const DIGEST = '[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9a-fA-F]{32,}';

/** Anchored pattern for a full image reference. */
export const IMAGE_REFERENCE_PATTERN = `^(${DOMAIN}/)?${PATH_COMPONENT}(/${PATH_COMPONENT})*([:]${TAG})?([@]${DIGEST})?$`;

/** Longest accepted reference: a 255-character name plus a tag and a sha512 digest fit. */
export const IMAGE_REFERENCE_MAX_LENGTH = 512;

const IMAGE_REFERENCE = new RegExp(IMAGE_REFERENCE_PATTERN);

/** True when `ref` is a syntactically valid image reference (not whether it can be pulled). */
export function isValidImageReference(ref: string): boolean {
  return ref.length > 0 && ref.length <= IMAGE_REFERENCE_MAX_LENGTH && IMAGE_REFERENCE.test(ref);
}
