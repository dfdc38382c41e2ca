/**
 * CRD conversion: `apiextensions.k8s.io/v1` `ConversionReview` handling with hub-and-spoke
 * converters, as controller-runtime's `conversion` package does it.
 *
 * Each kind names one **hub** version (the operator's own, usually the storage version) and, for
 * every other served version, a **spoke** with two pure functions: `toHub` and `fromHub`. Any
 * version converts to any other through the hub, so n versions need 2(n−1) functions, not n².
 *
 * Guarantees:
 * - objects are converted in order, each to `desiredAPIVersion`; an object already in that
 *   version is returned untouched; the response echoes the request's `uid`;
 * - the result is all or nothing: if one object cannot be converted (unknown kind or version, a
 *   converter that throws), the response is a `Failure` whose message names the object and the
 *   reason, and no object is returned. Nothing here throws out of `review()`;
 * - metadata other than labels and annotations is carried over from the input (the API server
 *   refuses any other change): a converter that changes the object's name, UID or any other such
 *   field has that change undone, not refused, so a converter only ever decides `spec`, `status`,
 *   labels and annotations.
 * Assumptions: converters are pure and deterministic (they run on every read of a non-hub
 * version, for lists once per item) and lossless in both directions, keeping fields the other
 * version cannot express in an annotation (see the operators' `api/conversion.ts`).
 * @module
 */
import type { KubeObject } from '../objects/index.ts';

export interface ConversionRequest {
  uid: string;
  desiredAPIVersion: string;
  objects: KubeObject[];
}

export interface ConversionResponse {
  uid: string;
  convertedObjects: KubeObject[];
  result: { status: 'Success' | 'Failure'; message?: string };
}

export interface ConversionReview {
  apiVersion: string;
  kind: 'ConversionReview';
  request?: ConversionRequest;
  response?: ConversionResponse;
}

/** One non-hub version of a kind: how its objects become hub objects and back. */
export interface Spoke<Hub extends KubeObject = KubeObject, Version extends KubeObject = KubeObject> {
  version: string;
  toHub(obj: Version): Hub;
  fromHub(hub: Hub): Version;
}

export interface KindConversion<Hub extends KubeObject = KubeObject> {
  group: string;
  kind: string;
  /** The hub version, e.g. `v1`. */
  hub: string;
  spokes: readonly Spoke<Hub, any>[];
}

/**
 * Called once per converted object with what was converted and how long it took. `kind`, `from`
 * and `to` name only what the registry serves (a registered kind, its versions); anything else a
 * request names is `other`, so a caller may use them as metric labels: no request can add values.
 */
export type ConversionObserver = (event: { kind: string; from: string; to: string; ok: boolean; seconds: number }) => void;

export class ConversionError extends Error {
  override readonly name = 'ConversionError';
}

/** Group and version of an `apiVersion`; anything but a string (a malformed review) is `''`. */
function splitApiVersion(apiVersion: unknown): { group: string; version: string } {
  const [a = '', b] = (typeof apiVersion === 'string' ? apiVersion : '').split('/');
  return b === undefined ? { group: '', version: a } : { group: a, version: b };
}

/** The converters of every kind an operator serves. */
export class ConversionRegistry {
  readonly #kinds = new Map<string, KindConversion>();

  register<Hub extends KubeObject>(conversion: KindConversion<Hub>): this {
    const id = `${conversion.group}/${conversion.kind}`;
    if (this.#kinds.has(id)) throw new Error(`conversion for ${id} is already registered`);
    const versions = conversion.spokes.map((s) => s.version);
    if (versions.includes(conversion.hub) || new Set(versions).size !== versions.length) {
      throw new Error(`conversion for ${id}: spoke versions must be distinct and differ from the hub ${conversion.hub}`);
    }
    this.#kinds.set(id, conversion as unknown as KindConversion);
    return this;
  }

  /** The versions a kind can be converted between (hub first), or undefined when unknown. */
  versions(group: string, kind: string): string[] | undefined {
    const c = this.#kinds.get(`${group}/${kind}`);
    return c ? [c.hub, ...c.spokes.map((s) => s.version)] : undefined;
  }

  /** Converts one object to `desiredAPIVersion`; throws `ConversionError`. */
  convert(obj: KubeObject, desiredAPIVersion: string): KubeObject {
    if (obj.apiVersion === desiredAPIVersion) return obj;
    const from = splitApiVersion(obj.apiVersion);
    const to = splitApiVersion(desiredAPIVersion);
    const what = `${obj.kind ?? 'object'} ${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata?.name ?? '?'}`;
    if (from.group !== to.group) throw new ConversionError(`${what}: cannot convert between groups (${obj.apiVersion} → ${desiredAPIVersion})`);
    const conversion = this.#kinds.get(`${from.group}/${obj.kind ?? ''}`);
    if (!conversion) throw new ConversionError(`${what}: no conversion registered for kind ${obj.kind} in group ${from.group}`);
    const spoke = (version: string) => {
      const s = conversion.spokes.find((x) => x.version === version);
      if (!s) throw new ConversionError(`${what}: version ${version} of ${obj.kind} is unknown to this operator (knows ${[conversion.hub, ...conversion.spokes.map((x) => x.version)].join(', ')})`);
      return s;
    };
    let hub: KubeObject;
    let out: KubeObject;
    try {
      hub = from.version === conversion.hub ? obj : spoke(from.version).toHub(structuredClone(obj));
      out = to.version === conversion.hub ? hub : spoke(to.version).fromHub(structuredClone(hub));
    } catch (err) {
      if (err instanceof ConversionError) throw err;
      throw new ConversionError(`${what}: ${obj.apiVersion} → ${desiredAPIVersion} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    // Identity and every metadata field but labels and annotations come from the input.
    const { labels: _l, annotations: _a, ...identity } = obj.metadata;
    const { labels, annotations } = out.metadata ?? {};
    return {
      ...out,
      apiVersion: desiredAPIVersion,
      kind: obj.kind!,
      metadata: {
        ...identity,
        ...(labels && Object.keys(labels).length ? { labels } : {}),
        ...(annotations && Object.keys(annotations).length ? { annotations } : {}),
      },
    } as KubeObject;
  }

  /** What an observer is told about one object: served kinds and versions, `other` for the rest. */
  #labels(obj: KubeObject | null | undefined, desiredAPIVersion: string): { kind: string; from: string; to: string } {
    const source = splitApiVersion(obj?.apiVersion);
    const conversion = typeof obj?.kind === 'string' ? this.#kinds.get(`${source.group}/${obj.kind}`) : undefined;
    if (!conversion) return { kind: 'other', from: 'other', to: 'other' };
    const served = (version: string) => (version === conversion.hub || conversion.spokes.some((s) => s.version === version) ? version : 'other');
    const target = splitApiVersion(desiredAPIVersion);
    return { kind: conversion.kind, from: served(source.version), to: target.group === source.group ? served(target.version) : 'other' };
  }

  /** Answers a ConversionReview; never throws (a malformed review gets a Failure). */
  review(review: unknown, observe?: ConversionObserver): ConversionReview {
    const apiVersion = (review as { apiVersion?: string } | null)?.apiVersion ?? 'apiextensions.k8s.io/v1';
    const request = (review as ConversionReview | null)?.request;
    const uid = typeof request?.uid === 'string' ? request.uid : '';
    const fail = (message: string): ConversionReview => ({
      apiVersion,
      kind: 'ConversionReview',
      response: { uid, convertedObjects: [], result: { status: 'Failure', message } },
    });
    if (!request || typeof request.desiredAPIVersion !== 'string' || !Array.isArray(request.objects)) {
      return fail('not a ConversionReview request: request.uid, request.desiredAPIVersion and request.objects are required');
    }
    const converted: KubeObject[] = [];
    for (const obj of request.objects) {
      const started = performance.now();
      const { kind, from, to } = this.#labels(obj, request.desiredAPIVersion);
      try {
        if (!obj || typeof obj !== 'object' || !obj.metadata) throw new ConversionError('an object without metadata cannot be converted');
        converted.push(this.convert(obj, request.desiredAPIVersion));
        observe?.({ kind, from, to, ok: true, seconds: (performance.now() - started) / 1000 });
      } catch (err) {
        observe?.({ kind, from, to, ok: false, seconds: (performance.now() - started) / 1000 });
        return fail(err instanceof Error ? err.message : String(err));
      }
    }
    return { apiVersion, kind: 'ConversionReview', response: { uid, convertedObjects: converted, result: { status: 'Success' } } };
  }
}
