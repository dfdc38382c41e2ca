/**
 * The resource a request path names, for the client's metrics and spans: the plural and, when
 * there is one, the subresource (`pods/eviction`), never an object's name or namespace, so a raw
 * request (`KubeClient.request`) adds one label value per kind of request, not one per object.
 * `discovery` for the group and version documents, `other` for paths outside `/api` and `/apis`.
 * Pure.
 * @module
 */
export function resourceOfPath(path: string): string {
  const segments = (path.split('?')[0] ?? '').split('/').filter(Boolean);
  const rest = segments[0] === 'api' ? segments.slice(2) : segments[0] === 'apis' ? segments.slice(3) : undefined;
  if (!rest) return 'other';
  if (rest.length === 0) return 'discovery';
  // namespaces/<ns>/<plural>/…, unless the namespace itself is the object (namespaces/<ns>[/status]).
  const ofNamespace = rest.length === 3 && NAMESPACE_SUBRESOURCES.has(rest[2]!);
  const scoped = rest[0] === 'namespaces' && rest.length >= 3 && !ofNamespace ? rest.slice(2) : rest;
  const [plural, , sub] = scoped;
  return sub ? `${plural}/${sub}` : plural!;
}

/** A Namespace's own subresources (`namespaces/<name>/status`), told from `namespaces/<ns>/<plural>`. */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);
