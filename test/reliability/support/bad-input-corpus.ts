/**
 * The bad-input corpus of checklist item 10: malformed Microservices and DigitalHumanProviders
 * (schema violations, CEL violations, absurd sizes, unknown fields, wrong types, broken bodies)
 * and what must happen to each:
 * - `reject`: the API server refuses it with this status and a message matching `message`
 *   (the message must name the offending field, so a person can fix it);
 * - `accept`: it gets through (unknown fields pruned, status ignored, input only the operator or
 *   the vendor can judge) and the operator must settle it: `converges`, or `Ready=False` with a
 *   stable `reason`.
 * Pure data; `bad-input.test.ts` sends it.
 * @module
 */

export type Kind = 'ms' | 'dhp';

export interface CorpusEntry {
  id: string;
  kind: Kind;
  what: string;
  /** The object (its `metadata.name` defaults to `id`); a string is sent as the raw body. */
  body?: (ctx: CorpusContext) => unknown;
  /** A change to an existing good object instead of a create: a merge patch of it. */
  patch?: (ctx: CorpusContext) => unknown;
  contentType?: string;
  query?: string;
  expect: { reject: number | number[]; message: RegExp } | { accept: 'converges' | { reason: string } };
}

export interface CorpusContext {
  ns: string;
  endpoint: string;
}

const GOOD_IMAGE = 'ghcr.io/yrw9281/it30-todo-api:0.1.0';
const ms = (name: string, spec: unknown, extra: Record<string, unknown> = {}) => ({ apiVersion: 'platform.example.io/v1alpha1', kind: 'Microservice', metadata: { name }, spec, ...extra });
const msSpec = (over: Record<string, unknown>) => ({ image: GOOD_IMAGE, port: 8080, ...over });
const dhp = (name: string, spec: unknown, extra: Record<string, unknown> = {}) => ({ apiVersion: 'dhp.example.com/v1alpha1', kind: 'DigitalHumanProvider', metadata: { name }, spec, ...extra });
const dhpSpec = (ctx: CorpusContext, over: Record<string, unknown>) => ({ endpoint: ctx.endpoint, region: 'ap-northeast-1', displayName: 'corpus', credentialsSecretRef: { name: 'creds' }, ...over });
const without = (o: Record<string, unknown>, key: string) => Object.fromEntries(Object.entries(o).filter(([k]) => k !== key));

const invalid = (message: RegExp) => ({ reject: 422, message });

export const corpus: CorpusEntry[] = [
  // ---- Microservice: the port ----
  { id: 'ms-port-zero', kind: 'ms', what: 'port 0', body: () => ms('ms-port-zero', msSpec({ port: 0 })), expect: invalid(/spec\.port.*greater than or equal to 1/) },
  { id: 'ms-port-negative', kind: 'ms', what: 'port -1', body: () => ms('ms-port-negative', msSpec({ port: -1 })), expect: invalid(/spec\.port.*greater than or equal to 1/) },
  { id: 'ms-port-70000', kind: 'ms', what: 'port 70000', body: () => ms('ms-port-70000', msSpec({ port: 70000 })), expect: invalid(/spec\.port.*less than or equal to 65535/) },
  { id: 'ms-port-huge', kind: 'ms', what: 'port 1e15', body: () => ms('ms-port-huge', msSpec({ port: 1e15 })), expect: invalid(/spec\.port/) },
  { id: 'ms-port-string', kind: 'ms', what: 'port as a string "8080"', body: () => ms('ms-port-string', msSpec({ port: '8080' })), expect: invalid(/spec\.port.*(integer|int32)/) },
  { id: 'ms-port-float', kind: 'ms', what: 'port 8080.5', body: () => ms('ms-port-float', msSpec({ port: 8080.5 })), expect: invalid(/spec\.port.*(integer|int32)/) },
  { id: 'ms-port-bool', kind: 'ms', what: 'port true', body: () => ms('ms-port-bool', msSpec({ port: true })), expect: invalid(/spec\.port.*(integer|int32)/) },
  { id: 'ms-port-array', kind: 'ms', what: 'port [8080]', body: () => ms('ms-port-array', msSpec({ port: [8080] })), expect: invalid(/spec\.port.*(integer|int32)/) },
  { id: 'ms-port-object', kind: 'ms', what: 'port {}', body: () => ms('ms-port-object', msSpec({ port: {} })), expect: invalid(/spec\.port.*(integer|int32)/) },
  { id: 'ms-port-null', kind: 'ms', what: 'port null', body: () => ms('ms-port-null', msSpec({ port: null })), expect: invalid(/spec\.port/) },
  { id: 'ms-port-missing', kind: 'ms', what: 'no port', body: () => ms('ms-port-missing', without(msSpec({}), 'port')), expect: invalid(/spec\.port: Required value/) },
  // ---- Microservice: the image ----
  { id: 'ms-image-empty', kind: 'ms', what: 'empty image', body: () => ms('ms-image-empty', msSpec({ image: '' })), expect: invalid(/spec\.image.*at least 1 chars/) },
  { id: 'ms-image-upper', kind: 'ms', what: 'upper-case repository', body: () => ms('ms-image-upper', msSpec({ image: 'ghcr.io/Org/App:1' })), expect: invalid(/spec\.image.*valid image reference/) },
  { id: 'ms-image-space', kind: 'ms', what: 'image with a space', body: () => ms('ms-image-space', msSpec({ image: 'nginx :1' })), expect: invalid(/spec\.image.*valid image reference/) },
  { id: 'ms-image-newline', kind: 'ms', what: 'image with a newline', body: () => ms('ms-image-newline', msSpec({ image: 'nginx:1\nrm -rf /' })), expect: invalid(/spec\.image.*valid image reference/) },
  { id: 'ms-image-empty-tag', kind: 'ms', what: 'empty tag', body: () => ms('ms-image-empty-tag', msSpec({ image: 'ghcr.io/org/app:' })), expect: invalid(/spec\.image.*valid image reference/) },
  { id: 'ms-image-double-slash', kind: 'ms', what: 'empty path component', body: () => ms('ms-image-double-slash', msSpec({ image: 'ghcr.io//app:1' })), expect: invalid(/spec\.image.*valid image reference/) },
  { id: 'ms-image-short-digest', kind: 'ms', what: 'truncated digest', body: () => ms('ms-image-short-digest', msSpec({ image: 'nginx@sha256:abc' })), expect: invalid(/spec\.image.*valid image reference/) },
  { id: 'ms-image-scheme', kind: 'ms', what: 'a URL instead of a reference', body: () => ms('ms-image-scheme', msSpec({ image: 'https://ghcr.io/org/app:1' })), expect: invalid(/spec\.image.*valid image reference/) },
  { id: 'ms-image-long', kind: 'ms', what: 'image of 5 000 characters', body: () => ms('ms-image-long', msSpec({ image: `ghcr.io/${'a'.repeat(5_000)}:1` })), expect: invalid(/spec\.image.*(Too long|at most)/) },
  { id: 'ms-image-number', kind: 'ms', what: 'image 42', body: () => ms('ms-image-number', msSpec({ image: 42 })), expect: invalid(/spec\.image.*string/) },
  { id: 'ms-image-null', kind: 'ms', what: 'image null', body: () => ms('ms-image-null', msSpec({ image: null })), expect: invalid(/spec\.image/) },
  { id: 'ms-image-array', kind: 'ms', what: 'image ["nginx"]', body: () => ms('ms-image-array', msSpec({ image: ['nginx'] })), expect: invalid(/spec\.image.*string/) },
  { id: 'ms-image-missing', kind: 'ms', what: 'no image', body: () => ms('ms-image-missing', without(msSpec({}), 'image')), expect: invalid(/spec\.image: Required value/) },
  // ---- Microservice: the spec itself ----
  { id: 'ms-spec-missing', kind: 'ms', what: 'no spec', body: () => ({ apiVersion: 'platform.example.io/v1alpha1', kind: 'Microservice', metadata: { name: 'ms-spec-missing' } }), expect: invalid(/spec: Required value/) },
  { id: 'ms-spec-null', kind: 'ms', what: 'spec null', body: () => ms('ms-spec-null', null), expect: invalid(/spec/) },
  { id: 'ms-spec-string', kind: 'ms', what: 'spec "image:port"', body: () => ms('ms-spec-string', 'nginx:8080'), expect: invalid(/spec.*object/) },
  { id: 'ms-spec-array', kind: 'ms', what: 'spec []', body: () => ms('ms-spec-array', []), expect: invalid(/spec.*object/) },
  // ---- Microservice: names and metadata ----
  { id: 'ms-name-upper', kind: 'ms', what: 'upper-case name', body: () => ms('Bad-Name', msSpec({})), expect: invalid(/metadata\.name.*(lowercase|lower case|RFC 1123)/i) },
  { id: 'ms-name-dot', kind: 'ms', what: 'a dotted name (valid object name, invalid Service name)', body: () => ms('dotted.name', msSpec({})), expect: invalid(/metadata\.name.*DNS-1035/) },
  { id: 'ms-name-digit', kind: 'ms', what: 'name starting with a digit', body: () => ms('9lives', msSpec({})), expect: invalid(/metadata\.name.*DNS-1035/) },
  { id: 'ms-name-64', kind: 'ms', what: 'name of 64 characters', body: () => ms(`a${'b'.repeat(63)}`, msSpec({})), expect: invalid(/metadata\.name: Too long/) },
  { id: 'ms-name-300', kind: 'ms', what: 'name of 300 characters', body: () => ms('a'.repeat(300), msSpec({})), expect: invalid(/metadata\.name.*(253|Too long)/) },
  { id: 'ms-name-empty', kind: 'ms', what: 'no name', body: () => ms('', msSpec({})), expect: invalid(/metadata\.name: Required value/) },
  { id: 'ms-annotations-huge', kind: 'ms', what: '300 KiB of annotations', body: () => ({ ...ms('ms-annotations-huge', msSpec({})), metadata: { name: 'ms-annotations-huge', annotations: { big: 'x'.repeat(300 * 1024) } } }), expect: invalid(/metadata\.annotations: Too long/) },
  { id: 'ms-label-bad', kind: 'ms', what: 'a label value with spaces', body: () => ({ ...ms('ms-label-bad', msSpec({})), metadata: { name: 'ms-label-bad', labels: { team: 'a b c' } } }), expect: invalid(/metadata\.labels/) },
  // ---- Microservice: broken requests ----
  { id: 'ms-json-truncated', kind: 'ms', what: 'truncated JSON', body: () => '{"apiVersion":"platform.example.io/v1alpha1","kind":"Microservice","metadata":{"name":"x"},"spec":{"image":', expect: { reject: 400, message: /(unexpected end|EOF|invalid character|couldn't get version)/i } },
  { id: 'ms-json-garbage', kind: 'ms', what: 'not JSON at all', body: () => 'image=nginx&port=80', expect: { reject: 400, message: /(invalid character|couldn't get version|Object 'Kind' is missing|yaml)/i } },
  { id: 'ms-wrong-content-type', kind: 'ms', what: 'text/plain body', body: () => ms('ms-wrong-content-type', msSpec({})), contentType: 'text/plain', expect: { reject: 415, message: /(Unsupported|content type|media type)/i } },
  { id: 'ms-wrong-apiversion', kind: 'ms', what: 'apiVersion v9 in the body', body: () => ({ ...ms('ms-wrong-apiversion', msSpec({})), apiVersion: 'platform.example.io/v9' }), expect: { reject: 400, message: /(does not match the expected API version|v9)/ } },
  { id: 'ms-wrong-kind', kind: 'ms', what: 'kind Deployment in the body', body: () => ({ ...ms('ms-wrong-kind', msSpec({})), kind: 'Deployment' }), expect: invalid(/kind: Invalid value: "Deployment": must be Microservice/) },
  { id: 'ms-unknown-strict', kind: 'ms', what: 'unknown field spec.replicas, strict validation (kubectl default)', body: () => ms('ms-unknown-strict', msSpec({ replicas: 3 })), query: 'fieldValidation=Strict', expect: { reject: [400, 422], message: /unknown field "spec\.replicas"/ } },
  { id: 'ms-duplicate-strict', kind: 'ms', what: 'duplicate field, strict validation', body: () => '{"apiVersion":"platform.example.io/v1alpha1","kind":"Microservice","metadata":{"name":"ms-duplicate-strict"},"spec":{"image":"nginx:1","port":80,"port":81}}', query: 'fieldValidation=Strict', expect: { reject: [400, 422], message: /duplicate field "(spec\.)?port"/ } },
  { id: 'ms-body-4mib', kind: 'ms', what: 'a 4 MiB body', body: () => ms('ms-body-4mib', msSpec({ padding: 'x'.repeat(4 * 1024 * 1024) })), expect: { reject: [413, 422, 400], message: /(too large|Too long|limit|exceeds)/i } },
  // ---- Microservice: updates of a good object ----
  { id: 'ms-update-port-zero', kind: 'ms', what: 'update: port to 0', patch: () => ({ spec: { port: 0 } }), expect: invalid(/spec\.port.*greater than or equal to 1/) },
  { id: 'ms-update-image-bad', kind: 'ms', what: 'update: image to "NOT VALID"', patch: () => ({ spec: { image: 'NOT VALID' } }), expect: invalid(/spec\.image.*valid image reference/) },
  { id: 'ms-update-spec-null', kind: 'ms', what: 'update: spec null', patch: () => ({ spec: null }), expect: invalid(/spec/) },
  // ---- Microservice: gets through ----
  { id: 'ms-unknown-pruned', kind: 'ms', what: 'unknown fields (default validation): pruned', body: () => ms('ms-unknown-pruned', msSpec({ replicas: 3, sidecar: { image: 'evil' } }), { extra: true }), expect: { accept: 'converges' } },
  { id: 'ms-status-on-create', kind: 'ms', what: 'a status on create: ignored (status subresource)', body: () => ms('ms-status-on-create', msSpec({}), { status: { phase: 'ResourcesApplied', observedGeneration: 99 } }), expect: { accept: 'converges' } },
  { id: 'ms-unknown-1mib', kind: 'ms', what: '1 MiB of unknown fields: pruned before storage', body: () => ms('ms-unknown-1mib', msSpec({ junk: 'x'.repeat(1024 * 1024) })), expect: { accept: 'converges' } },
  { id: 'ms-max-port', kind: 'ms', what: 'port 65535 and a 63-character name (the edges)', body: () => ms(`e${'d'.repeat(62)}`, msSpec({ port: 65535 })), expect: { accept: 'converges' } },

  // ---- DigitalHumanProvider: rejected ----
  { id: 'dhp-http', kind: 'dhp', what: 'http:// endpoint', body: (c) => dhp('dhp-http', dhpSpec(c, { endpoint: 'http://vendor.example' })), expect: invalid(/spec\.endpoint.*https/) },
  { id: 'dhp-endpoint-fragment', kind: 'dhp', what: 'endpoint with a fragment (would cut off the client\'s paths)', body: (c) => dhp('dhp-endpoint-fragment', dhpSpec(c, { endpoint: 'https://vendor.example/x#' })), expect: invalid(/spec\.endpoint.*base URL/) },
  { id: 'dhp-endpoint-userinfo', kind: 'dhp', what: 'endpoint with user info', body: (c) => dhp('dhp-endpoint-userinfo', dhpSpec(c, { endpoint: 'https://user:pass@vendor.example' })), expect: invalid(/spec\.endpoint.*base URL/) },
  { id: 'dhp-endpoint-short', kind: 'dhp', what: 'endpoint "https://"', body: (c) => dhp('dhp-endpoint-short', dhpSpec(c, { endpoint: 'https://' })), expect: invalid(/spec\.endpoint/) },
  { id: 'dhp-endpoint-not-url', kind: 'dhp', what: 'endpoint with a space', body: (c) => dhp('dhp-endpoint-not-url', dhpSpec(c, { endpoint: 'https://exa mple' })), expect: invalid(/endpoint must be an absolute https:\/\/ URL/) },
  { id: 'dhp-endpoint-long', kind: 'dhp', what: 'endpoint of 3 000 characters', body: (c) => dhp('dhp-endpoint-long', dhpSpec(c, { endpoint: `https://${'a'.repeat(3_000)}.example` })), expect: invalid(/spec\.endpoint.*(Too long|at most)/) },
  { id: 'dhp-endpoint-number', kind: 'dhp', what: 'endpoint 443', body: (c) => dhp('dhp-endpoint-number', dhpSpec(c, { endpoint: 443 })), expect: invalid(/spec\.endpoint.*string/) },
  { id: 'dhp-endpoint-missing', kind: 'dhp', what: 'no endpoint', body: (c) => dhp('dhp-endpoint-missing', without(dhpSpec(c, {}), 'endpoint')), expect: invalid(/spec\.endpoint: Required value/) },
  { id: 'dhp-region-empty', kind: 'dhp', what: 'empty region', body: (c) => dhp('dhp-region-empty', dhpSpec(c, { region: '' })), expect: invalid(/spec\.region.*at least 1 chars/) },
  { id: 'dhp-region-missing', kind: 'dhp', what: 'no region', body: (c) => dhp('dhp-region-missing', without(dhpSpec(c, {}), 'region')), expect: invalid(/spec\.region: Required value/) },
  { id: 'dhp-region-long', kind: 'dhp', what: 'region of 100 characters', body: (c) => dhp('dhp-region-long', dhpSpec(c, { region: 'r'.repeat(100) })), expect: invalid(/spec\.region.*(Too long|at most)/) },
  { id: 'dhp-region-object', kind: 'dhp', what: 'region {}', body: (c) => dhp('dhp-region-object', dhpSpec(c, { region: {} })), expect: invalid(/spec\.region.*string/) },
  { id: 'dhp-display-long', kind: 'dhp', what: 'displayName of 300 characters', body: (c) => dhp('dhp-display-long', dhpSpec(c, { displayName: 'n'.repeat(300) })), expect: invalid(/spec\.displayName.*(Too long|at most)/) },
  { id: 'dhp-creds-missing', kind: 'dhp', what: 'no credentialsSecretRef', body: (c) => dhp('dhp-creds-missing', without(dhpSpec(c, {}), 'credentialsSecretRef')), expect: invalid(/spec\.credentialsSecretRef: Required value/) },
  { id: 'dhp-creds-string', kind: 'dhp', what: 'credentialsSecretRef "creds"', body: (c) => dhp('dhp-creds-string', dhpSpec(c, { credentialsSecretRef: 'creds' })), expect: invalid(/spec\.credentialsSecretRef.*object/) },
  { id: 'dhp-creds-name-empty', kind: 'dhp', what: 'empty Secret name', body: (c) => dhp('dhp-creds-name-empty', dhpSpec(c, { credentialsSecretRef: { name: '' } })), expect: invalid(/spec\.credentialsSecretRef\.name/) },
  { id: 'dhp-creds-name-bad', kind: 'dhp', what: 'Secret name "Bad_Name"', body: (c) => dhp('dhp-creds-name-bad', dhpSpec(c, { credentialsSecretRef: { name: 'Bad_Name' } })), expect: invalid(/spec\.credentialsSecretRef\.name.*should match/) },
  { id: 'dhp-creds-key-bad', kind: 'dhp', what: 'Secret key "bad key!"', body: (c) => dhp('dhp-creds-key-bad', dhpSpec(c, { credentialsSecretRef: { name: 'creds', key: 'bad key!' } })), expect: invalid(/spec\.credentialsSecretRef\.key.*should match/) },
  { id: 'dhp-spec-null', kind: 'dhp', what: 'spec null', body: () => dhp('dhp-spec-null', null), expect: invalid(/spec/) },
  { id: 'dhp-unknown-strict', kind: 'dhp', what: 'unknown field spec.apiKey, strict validation', body: (c) => dhp('dhp-unknown-strict', dhpSpec(c, { apiKey: 'secret' })), query: 'fieldValidation=Strict', expect: { reject: [400, 422], message: /unknown field "spec\.apiKey"/ } },
  { id: 'dhp-update-region', kind: 'dhp', what: 'update: region changed (CEL: immutable)', patch: () => ({ spec: { region: 'eu-west-1' } }), expect: invalid(/region is immutable/) },
  { id: 'dhp-update-endpoint-http', kind: 'dhp', what: 'update: endpoint to http://', patch: () => ({ spec: { endpoint: 'http://vendor.example' } }), expect: invalid(/spec\.endpoint.*https/) },
  // ---- DigitalHumanProvider: gets through, the operator must judge ----
  { id: 'dhp-no-secret', kind: 'dhp', what: 'names a Secret that does not exist', body: (c) => dhp('dhp-no-secret', dhpSpec(c, { credentialsSecretRef: { name: 'nope' } })), expect: { accept: { reason: 'CredentialsMissing' } } },
  { id: 'dhp-no-key', kind: 'dhp', what: 'names a key the Secret lacks', body: (c) => dhp('dhp-no-key', dhpSpec(c, { credentialsSecretRef: { name: 'creds', key: 'missing' } })), expect: { accept: { reason: 'CredentialsMissing' } } },
  { id: 'dhp-unlabelled-secret', kind: 'dhp', what: 'names a Secret without the vendor-credentials label', body: (c) => dhp('dhp-unlabelled-secret', dhpSpec(c, { credentialsSecretRef: { name: 'unlabelled-creds' } })), expect: { accept: { reason: 'CredentialsNotAllowed' } } },
  { id: 'dhp-wrapped-token', kind: 'dhp', what: 'a token with a line break in it', body: (c) => dhp('dhp-wrapped-token', dhpSpec(c, { credentialsSecretRef: { name: 'wrapped-creds' } })), expect: { accept: { reason: 'CredentialsInvalid' } } },
  { id: 'dhp-wrong-token', kind: 'dhp', what: 'a token the vendor rejects', body: (c) => dhp('dhp-wrong-token', dhpSpec(c, { credentialsSecretRef: { name: 'wrong-creds' } })), expect: { accept: { reason: 'Unauthorized' } } },
  // Issue 18 item 7: what the vendor would refuse is refused by the schema, in the vendor's terms.
  { id: 'dhp-vendor-region', kind: 'dhp', what: 'a region the vendor refuses (upper case)', body: (c) => dhp('dhp-vendor-region', dhpSpec(c, { region: 'Tokyo_1' })), expect: invalid(/spec\.region.*region must be lower-case letters, digits and dashes/) },
  { id: 'dhp-vendor-region-space', kind: 'dhp', what: 'region "Mars 1"', body: (c) => dhp('dhp-vendor-region-space', dhpSpec(c, { region: 'Mars 1' })), expect: invalid(/spec\.region.*as the vendor names its regions \(e\.g\. ap-northeast-1\)/) },
  { id: 'dhp-unreachable', kind: 'dhp', what: 'an endpoint nothing listens on', body: (c) => dhp('dhp-unreachable', dhpSpec(c, { endpoint: 'https://127.0.0.1:1' })), expect: { accept: { reason: 'EnsureFailed' } } },
  { id: 'dhp-untrusted-tls', kind: 'dhp', what: 'an https endpoint whose certificate is not trusted (the API server)', body: (c) => dhp('dhp-untrusted-tls', dhpSpec(c, { endpoint: process.env.CONVERGE_TEST_SERVER ?? 'https://127.0.0.1:6443' })), expect: { accept: { reason: 'EnsureFailed' } } },
  { id: 'dhp-unknown-pruned', kind: 'dhp', what: 'unknown fields (default validation): pruned', body: (c) => dhp('dhp-unknown-pruned', dhpSpec(c, { apiKey: 'not-a-field' }), { extra: 1 }), expect: { accept: 'converges' } },
  { id: 'dhp-unicode-name', kind: 'dhp', what: 'displayName with emoji and control characters', body: (c) => dhp('dhp-unicode-name', dhpSpec(c, { displayName: 'Präsentator 🎤\u0007\t' })), expect: { accept: 'converges' } },
];
