/**
 * HTTP plumbing shared by the simulator's /v1 and /admin handlers: the standard failure
 * (`HttpFailure` → the `ErrorBody` of `openapi.yaml`), bounded body reading, JSON objects only.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';

export const MAX_BODY_BYTES = 64 * 1024;

/** Thrown by handlers to answer with the standard error body. */
export class HttpFailure extends Error {
  readonly status: number;
  readonly code: string;
  readonly field: string | undefined;
  readonly headers: Record<string, string>;
  constructor(status: number, code: string, message: string, field?: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field;
    this.headers = headers;
  }
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new HttpFailure(413, 'PayloadTooLarge', `request body over ${MAX_BODY_BYTES} bytes`));
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolveBody(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The body as a JSON object; 400 otherwise. An empty body is 400 unless `emptyIs` is given. */
export async function readJson(req: IncomingMessage, emptyIs?: Record<string, unknown>): Promise<Record<string, unknown>> {
  const text = await readBody(req);
  if (text.trim() === '' && emptyIs !== undefined) return emptyIs;
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    throw new HttpFailure(400, 'InvalidRequest', 'body is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpFailure(400, 'InvalidRequest', 'body must be a JSON object');
  return body as Record<string, unknown>;
}

export function onlyFields(body: Record<string, unknown>, allowed: string[]): void {
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) throw new HttpFailure(400, 'InvalidRequest', `unknown field "${key}"`, key);
  }
}

/** The token of an `Authorization: Bearer …` header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  return header?.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : undefined;
}

/** A positive integer field of a body, within [1, max]; 400 naming the field otherwise. */
export function positiveInteger(body: Record<string, unknown>, field: string, max: number): number {
  const v = body[field];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > max) throw new HttpFailure(400, 'InvalidRequest', `${field} must be an integer from 1 to ${max}`, field);
  return v;
}
