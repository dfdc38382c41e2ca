/**
 * What a Microservice may be called: its name becomes the Deployment's, the Service's and the
 * `app` label's, so it must be a DNS-1035 label (a Service name) of at most 63 characters. The
 * schemas (`v1alpha1.ts`, `v1.ts`) ask the API server to enforce it; the operator checks it again
 * for objects that predate them. Plain data and a pure function, so that code which only checks a
 * name does not load the schemas.
 * @module
 */

/** Service names are DNS-1035 labels; the CR name becomes the Service, Deployment and `app` label. */
export const DNS_1035_LABEL = '^[a-z]([-a-z0-9]*[a-z0-9])?$';

/** True when `name` can name the Microservice's Service (a DNS-1035 label, at most 63 characters). */
export function isValidMicroserviceName(name: string): boolean {
  return name.length <= 63 && new RegExp(DNS_1035_LABEL).test(name);
}
