/**
 * Ready's message for a provider whose `spec.endpoint` `provider.vendor.allowedEndpoints` does not
 * allow: what a person can do. While no instance may live at the endpoint: name an allowed one.
 * Once one may (`status.providerID` or `status.instanceEndpoint` recorded, so `spec.endpoint` can
 * no longer change): add the endpoint back to the list, or give the instance up and delete the
 * provider (the exact commands). Pure.
 * @module
 */
import type { DigitalHumanProvider } from './api/schema-free.ts';
import { abandonCommand } from './abandonment.ts';

/** Ready's message for a provider whose `spec.endpoint` is not allowed by `entries`. Pure. */
export function endpointNotAllowedMessage(dhp: DigitalHumanProvider, entries: readonly string[]): string {
  const shown = entries.slice(0, 3).join(', ') + (entries.length > 3 ? `, and ${entries.length - 3} more` : '');
  const refused = `spec.endpoint ${dhp.spec.endpoint} is not among the vendor endpoints this operator may call (provider.vendor.allowedEndpoints: ${shown})`;
  const id = dhp.status?.providerID;
  const where = dhp.status?.instanceEndpoint;
  if (!id && !where) return `${refused}; nothing was read or sent. Name an allowed endpoint, or have it added to the operator's configuration`;
  const what = id ? `vendor instance ${id} exists at ${where ?? dhp.spec.endpoint}` : `a create was requested at ${where}${dhp.status?.createRequestedAt ? ` (${dhp.status.createRequestedAt})` : ''}, so an instance may exist there`;
  const { name, namespace } = dhp.metadata;
  return `${refused}, but ${what}: it is neither observed nor cleaned up meanwhile, and spec.endpoint cannot change while it may exist. Either add ${where ?? dhp.spec.endpoint} back to provider.vendor.allowedEndpoints (read when the operator starts), or give the instance up and delete this provider: ${abandonCommand(dhp)} && kubectl delete dhp ${name} -n ${namespace}`;
}
