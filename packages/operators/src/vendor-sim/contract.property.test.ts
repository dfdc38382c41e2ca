/**
 * The simulator against its contract, `openapi.yaml`: random sequences of /v1 requests (valid and
 * not: other accounts' ids, bad tokens, bodies the vendor refuses, pages and keys of every kind),
 * interleaved with what the vendor's side does (accounts suspended, health and quotas changed,
 * quota days started, injected errors, 429s and outages). Every answer must be one the contract
 * documents for its operation: a listed status, a body its schema accepts (ajv, the OpenAPI 3.0
 * schema read as JSON Schema), the headers it promises (Retry-After, Location,
 * Idempotent-Replayed). The operator's vendor client is written to the contract and tested
 * against the simulator; a simulator that strayed from it would make those tests say nothing.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { rootCertificates } from 'node:tls';
import fc from 'fast-check';
import { Agent, request } from 'undici';
import { parse } from 'yaml';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { startVendorSimulator, type VendorSimulator } from './index.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const TOKENS = { a: 'contract-token-a', b: 'contract-token-b' } as const;
const RUNS = Number(process.env.VENDOR_CONTRACT_RUNS ?? 300);

interface OpenApiResponse {
  content?: Record<string, { schema: unknown }>;
  headers?: Record<string, unknown>;
  $ref?: string;
}
interface OpenApiOperation {
  responses: Record<string, OpenApiResponse>;
}
type OpenApiDoc = { paths: Record<string, Record<string, OpenApiOperation>>; components: { responses: Record<string, OpenApiResponse> } };

/** The contract: which operation a request is, and whether an answer is one it documents. */
async function loadContract() {
  const doc = parse(await readFile(new URL('./openapi.yaml', import.meta.url), 'utf8')) as OpenApiDoc;
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, 'openapi');
  const routes = Object.entries(doc.paths).map(([template, item]) => ({
    template,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    item,
  }));
  const resolve = (r: OpenApiResponse): OpenApiResponse => (r.$ref ? doc.components.responses[r.$ref.split('/').at(-1)!]! : r);
  const validators = new Map<string, ReturnType<Ajv['compile']>>();
  const validator = (pointer: string) => {
    let v = validators.get(pointer);
    if (!v) validators.set(pointer, (v = ajv.compile({ $ref: `openapi#${pointer}` })));
    return v;
  };
  return {
    /** Fails the test unless `answer` is one the contract documents for `method path`. */
    check(method: string, url: string, answer: Answer, what: string) {
      const path = url.split('?')[0]!;
      const route = routes.find((r) => r.pattern.test(path) && !(r.template.endsWith('/{id}') && path.split('/').length !== r.template.split('/').length));
      assert.ok(route, `${what}: no route in the contract for ${path}`);
      const op = route.item[method.toLowerCase()];
      assert.ok(op, `${what}: ${method} ${route.template} is not in the contract`);
      const key = String(answer.status) in op.responses ? String(answer.status) : `${String(answer.status)[0]}XX` in op.responses ? `${String(answer.status)[0]}XX` : 'default';
      const documented = op.responses[key];
      assert.ok(documented, `${what}: ${method} ${route.template} answered ${answer.status} (${answer.text.slice(0, 200)}), which its responses (${Object.keys(op.responses).join(', ')}) do not list`);
      const response = resolve(documented);
      if (response.content) {
        const pointer = `/paths/${route.template.replaceAll('~', '~0').replaceAll('/', '~1')}/${method.toLowerCase()}/responses/${key}`;
        const schemaPointer = documented.$ref ? `/components/responses/${documented.$ref.split('/').at(-1)}/content/application~1json/schema` : `${pointer}/content/application~1json/schema`;
        assert.match(String(answer.headers['content-type'] ?? ''), /^application\/json/, `${what}: content type`);
        const validate = validator(schemaPointer);
        assert.ok(validate(answer.body), `${what}: ${method} ${route.template} ${answer.status} body ${answer.text.slice(0, 300)} breaks its schema: ${ajv.errorsText(validate.errors)}`);
      } else {
        assert.equal(answer.text, '', `${what}: ${method} ${route.template} ${answer.status} has no documented body`);
      }
      if (response.headers && 'Retry-After' in response.headers) {
        assert.match(String(answer.headers['retry-after'] ?? ''), /^[1-9][0-9]*$/, `${what}: Retry-After of a ${answer.status} (whole seconds, at least 1)`);
      }
      if (response.headers && 'Location' in response.headers) assert.equal(answer.headers.location, `/v1/instances/${answer.body.id}`, `${what}: Location`);
      if (response.headers && 'Idempotent-Replayed' in response.headers) assert.equal(answer.headers['idempotent-replayed'], 'true', `${what}: Idempotent-Replayed`);
    },
    /** The schema of a component, for checks the response schemas leave open. */
    validComponent(name: string, value: unknown): string | undefined {
      const validate = validator(`/components/schemas/${name}`);
      return validate(value) ? undefined : ajv.errorsText(validate.errors);
    },
  };
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: any;
}

// ---------------------------------------------------------------- the requests and the vendor's moves
const who = fc.constantFrom<'a' | 'b' | 'bad' | 'none'>('a', 'a', 'a', 'b', 'bad', 'none');
const idRef = fc.oneof(fc.nat(5).map((i) => ({ known: i })), fc.constantFrom({ raw: 'inst-0000000000000000' }, { raw: 'x%20y' }, { raw: 'é' }));
const region = fc.oneof({ arbitrary: fc.constantFrom('eu-west', 'us-east'), weight: 4 }, { arbitrary: fc.constantFrom('x', 'EU', '-bad', 'a'.repeat(64), ''), weight: 1 });
const displayName = fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('😀'.repeat(256), 'a'.repeat(257)));
const createBody = fc.oneof(
  { arbitrary: fc.record({ region, displayName }, { requiredKeys: ['region'] }), weight: 6 },
  { arbitrary: fc.constantFrom<unknown>({}, { region: 'eu-west', extra: 1 }, [], 'text', null, { region: 7 }, { raw: '{"region":' }), weight: 1 },
);
const limitsPatch = fc.oneof(
  fc.record({ maxConcurrency: fc.integer({ min: -1, max: 10_001 }), requestsPerMinute: fc.integer({ min: 0, max: 2_000_000 }), dailyQuota: fc.oneof(fc.integer({ min: 1, max: 20 }), fc.constant(1_000_000_001)) }, { requiredKeys: [] }),
  fc.constantFrom<unknown>({ dailyQuota: null }, { other: 1 }, { maxConcurrency: 1.5 }, 'x'),
);
const command = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('create' as const), who, body: createBody, key: fc.option(fc.constantFrom('k1', 'k2', 'k3', 'k'.repeat(256)), { nil: undefined }) }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('list' as const), who, view: fc.option(fc.constantFrom('basic', 'full', 'bogus'), { nil: undefined }), pageSize: fc.option(fc.constantFrom('1', '2', '0', '1001', 'x'), { nil: undefined }), pageToken: fc.option(fc.constantFrom('last', 'garbage', 'x'.repeat(300)), { nil: undefined }), key: fc.option(fc.constantFrom('k1', 'k2', ''), { nil: undefined }) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constantFrom('get' as const, 'health' as const, 'limits' as const, 'usage' as const, 'delete' as const, 'delete' as const, 'call' as const), who, id: idRef }), weight: 5 },
  { arbitrary: fc.record({ kind: fc.constant('update' as const), who, id: idRef, body: fc.oneof(fc.record({ displayName, region }, { requiredKeys: [] }), fc.constantFrom<unknown>({ other: 1 }, 'x', { displayName: null })) }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('setLimits' as const), who, id: idRef, body: limitsPatch }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('account' as const), who }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('replayElsewhere' as const), who, key: fc.constantFrom('k1', 'k2') }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('vendor' as const), move: fc.constantFrom('suspend-a', 'resume-a', 'suspend-b', 'health-down', 'health-degraded', 'exhaust', 'throttle', 'next-day', 'lower-rpm'), id: fc.nat(5) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('fault' as const), fault: fc.constantFrom('none', 'none', 'none', 'error-500', 'error-400', 'error-503', 'burst-rate', 'burst-quota', 'burst-throttle', 'outage', 'rate-limit') }), weight: 1 },
);

describe('the vendor simulator keeps to openapi.yaml', () => {
  let sim: VendorSimulator;
  let dispatcher: Agent;
  let contract: Awaited<ReturnType<typeof loadContract>>;

  before(async () => {
    contract = await loadContract();
    sim = await startVendorSimulator({ token: TOKENS.a, accounts: [{ id: 'other', token: TOKENS.b }] });
    dispatcher = new Agent({ connect: { ca: [...rootCertificates, sim.caPem] } });
  });
  after(async () => {
    await dispatcher.close();
    await sim.stop();
  });

  async function send(method: string, path: string, whoFor: 'a' | 'b' | 'bad' | 'none', body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const token = whoFor === 'none' ? undefined : whoFor === 'bad' ? 'not-a-token' : TOKENS[whoFor];
    const raw = body !== null && typeof body === 'object' && 'raw' in body ? String((body as { raw: string }).raw) : undefined;
    const res = await request(`${sim.baseUrl}${path}`, {
      method: method as 'GET',
      dispatcher,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: raw ?? JSON.stringify(body) }),
    });
    const text = await res.body.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    return { status: res.statusCode, headers: res.headers, text, body: parsed };
  }

  it(`property: every answer to ${RUNS} random sequences of requests and vendor moves is one the contract documents`, { timeout: 300_000 }, async () => {
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 5, maxLength: 30 }), async (commands) => {
        sim.reset({ instances: true });
        sim.clearFaults();
        const ids: string[] = [];
        let lastPageToken = 'none';
        const idOf = (ref: { known: number } | { raw: string }) => encodeURIComponent('known' in ref ? (ids[ref.known % Math.max(1, ids.length)] ?? 'inst-none') : ref.raw);
        for (const [i, c] of commands.entries()) {
          const what = `command ${i} ${JSON.stringify(c).slice(0, 200)}`;
          let method = 'GET';
          let path = '';
          let answer: Answer;
          switch (c.kind) {
            case 'vendor': {
              const live = sim.instances();
              const target = live[c.id % Math.max(1, live.length)];
              if (c.move === 'suspend-a') sim.suspendAccount(undefined, 'invoice unpaid', 'NonPayment');
              if (c.move === 'resume-a') sim.resumeAccount();
              if (c.move === 'suspend-b') sim.suspendAccount('other', 'fraud check');
              if (c.move === 'next-day') sim.advanceQuotaDay();
              if (target && c.move === 'health-down') sim.setHealth(target.id, 'down', 'GPU lost');
              if (target && c.move === 'health-degraded') sim.setHealth(target.id, 'degraded');
              if (target && c.move === 'exhaust') sim.consume(target.id, target.limits.dailyQuota);
              if (target && c.move === 'throttle') sim.throttle(target.id, 3);
              if (target && c.move === 'lower-rpm') sim.setLimits(target.id, { requestsPerMinute: 1 });
              continue;
            }
            case 'fault': {
              sim.clearFaults();
              if (c.fault === 'error-500') sim.setFaults({ errors: { rate: 0.5, status: 500 } });
              if (c.fault === 'error-503') sim.setFaults({ errors: { rate: 1, status: 503 } });
              if (c.fault === 'error-400') sim.setFaults({ errors: { rate: 0.5, status: 400, ops: ['create', 'list', 'update', 'setLimits'] } }); // only where the contract lists a 400
              if (c.fault === 'burst-rate') sim.setFaults({ burst429: { count: 2, retryAfterSeconds: 2 } });
              if (c.fault === 'burst-quota') sim.setFaults({ burst429: { count: 1, code: 'QuotaExhausted' } });
              if (c.fault === 'burst-throttle') sim.setFaults({ burst429: { count: 1, code: 'InstanceThrottled' } });
              if (c.fault === 'outage') sim.setFaults({ outage: { status: 502 } });
              if (c.fault === 'rate-limit') sim.setFaults({ rateLimit: { requestsPerSecond: 0.5, burst: 2 } });
              continue;
            }
            case 'create':
              method = 'POST';
              path = '/v1/instances';
              answer = await send(method, path, c.who, c.body, c.key === undefined ? {} : { 'idempotency-key': c.key });
              if (answer.status === 201) ids.push(answer.body.id);
              break;
            case 'replayElsewhere': {
              // The same key in another region (409 IdempotencyKeyReused once the first exists).
              method = 'POST';
              path = '/v1/instances';
              const first = await send(method, path, c.who, { region: 'eu-west' }, { 'idempotency-key': c.key });
              contract.check(method, path, first, `${what} (first)`);
              if (first.status === 201) ids.push(first.body.id);
              answer = await send(method, path, c.who, { region: 'us-east' }, { 'idempotency-key': c.key });
              break;
            }
            case 'list': {
              const q = new URLSearchParams();
              if (c.view !== undefined) q.set('view', c.view);
              if (c.pageSize !== undefined) q.set('pageSize', c.pageSize);
              if (c.pageToken !== undefined) q.set('pageToken', c.pageToken === 'last' ? lastPageToken : c.pageToken);
              if (c.key !== undefined) q.set('idempotencyKey', c.key);
              path = `/v1/instances${q.size ? `?${q}` : ''}`;
              answer = await send(method, path, c.who);
              if (answer.status === 200 && answer.body.nextPageToken) lastPageToken = answer.body.nextPageToken;
              if (answer.status === 200 && c.view === 'full') {
                for (const item of answer.body.items) assert.equal(contract.validComponent('InstanceState', item), undefined, `${what}: a view=full item is an InstanceState`);
              }
              break;
            }
            case 'get':
              path = `/v1/instances/${idOf(c.id)}`;
              answer = await send(method, path, c.who);
              break;
            case 'health':
            case 'limits':
            case 'usage':
              path = `/v1/instances/${idOf(c.id)}/${c.kind}`;
              answer = await send(method, path, c.who);
              break;
            case 'delete':
              method = 'DELETE';
              path = `/v1/instances/${idOf(c.id)}`;
              answer = await send(method, path, c.who);
              break;
            case 'call':
              method = 'POST';
              path = `/v1/instances/${idOf(c.id)}/calls`;
              answer = await send(method, path, c.who);
              break;
            case 'update':
              method = 'PATCH';
              path = `/v1/instances/${idOf(c.id)}`;
              answer = await send(method, path, c.who, c.body);
              break;
            case 'setLimits':
              method = 'PATCH';
              path = `/v1/instances/${idOf(c.id)}/limits`;
              answer = await send(method, path, c.who, c.body);
              break;
            case 'account':
              path = '/v1/account';
              answer = await send(method, path, c.who);
              break;
          }
          contract.check(method, path, answer!, what);
          const tally = `${method} ${path.split('?')[0]!.replace(/\/v1\/instances\/[^/]+/, '/v1/instances/{id}')} ${answer!.status}`;
          seen.set(tally, (seen.get(tally) ?? 0) + 1);
        }
      }),
      { numRuns: RUNS },
    );
    // The sequences reach the answers that matter, not only 200s.
    const statuses = new Set([...seen.keys()].map((k) => k.split(' ').at(-1)));
    for (const s of ['200', '201', '204', '400', '401', '403', '404', '409', '422', '429', '500', '502', '503']) assert.ok(statuses.has(s), `no ${s} answer was seen: ${[...statuses].join(', ')}`);
  });
});
