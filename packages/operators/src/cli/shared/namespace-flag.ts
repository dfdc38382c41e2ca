/**
 * `-n/--namespace` and `-A/--all-namespaces` as kubectl reads them: the flag, else the current
 * context's namespace, else `default`; `-A` means every namespace (returned as `null`).
 * @module
 */
import type { KubeConfig } from '@converge/runtime';

export function namespaceFrom(kubeConfig: KubeConfig, flag: string | undefined, allNamespaces = false): string | null {
  if (allNamespaces) return null;
  if (flag) return flag;
  const context = kubeConfig.getContextObject(kubeConfig.getCurrentContext());
  return context?.namespace || 'default';
}
