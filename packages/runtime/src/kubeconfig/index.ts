/**
 * Kubeconfig and credentials: which cluster to talk to and how to prove who we are, as kubectl
 * and client-go do it, without `@kubernetes/client-node` (ADR 0025: it cost ≈ 25 MB of heap,
 * ≈ 87 MB of RSS and 0.55 s of start-up for what is a few hundred lines here).
 *
 * Guarantees:
 * - Finding: an explicit path; else `$KUBECONFIG` (a list, merged as client-go merges it: the
 *   first file naming a cluster, user or context wins it); else `~/.kube/config`; else the pod's
 *   ServiceAccount. When there is none, the error says where it looked, e.g. "no kubeconfig
 *   found: looked at $KUBECONFIG (unset), ~/.kube/config (missing), in-cluster (not in a pod: …)".
 * - Relative paths in a file (CA, client certificate and key, token file, an exec command with a
 *   `/`) are resolved against that file's folder.
 * - Credentials: bearer token; token file re-read when it changes (rotated in-cluster tokens);
 *   client certificate and key as data or files; basic auth; impersonation (`as`); exec
 *   credential plugins (`client.authentication.k8s.io/v1` and `v1beta1`) cached until their
 *   `expirationTimestamp` and re-run after a 401; CA as data or file; `insecure-skip-tls-verify`;
 *   `tls-server-name`; `proxy-url` (http, https or socks5, as kubectl; another scheme is refused);
 *   plain `http://` servers (what `kubectl proxy` serves).
 * - `-data` fields (`certificate-authority-data`, `client-certificate-data`, `client-key-data`)
 *   are read as kubectl reads them: padded base64, line breaks skipped. Anything else (a PEM
 *   pasted where its base64 belongs) is refused with the field's name, as kubectl refuses it,
 *   instead of becoming a CA that trusts no server; so is a CA (data or file) with no PEM
 *   certificate in it.
 * - Impersonated names (`as`, `as-groups`, `as-uid`, `as-user-extra`) reach the API server as
 *   kubectl sends them, UTF-8, whatever their script; a token or name holding a line break or
 *   another control character (which no HTTP header can carry) is refused up front.
 * - Errors are `KubeConfigError`s that name the file, context, cluster, user or command, never a
 *   secret.
 *
 * Caveats: `auth-provider` users (gcp, azure, oidc) are refused with a message pointing at exec
 * plugins (kubectl removed gcp and azure in 1.26). YAML files load the `yaml` package on first
 * use; JSON files and the in-cluster configuration do not.
 * @module
 */
export { KubeConfig, KubeConfigError, fromKubeconfigDocument, toKubeconfigDocument, readKubeconfigFile } from './kubeconfig.ts';
export type { KubeConfigCluster, KubeConfigUser, KubeConfigContext, KubeConfigOptions, ExecConfig, KubeconfigDocument } from './kubeconfig.ts';
export { loadKubeConfig, inClusterConfig, mergeKubeconfigs, SERVICE_ACCOUNT_DIR } from './load.ts';
export type { LoadKubeConfigOptions } from './load.ts';
export { Credentials } from './credentials.ts';
export type { CredentialsOptions, TlsMaterial, UsedCredentials } from './credentials.ts';
export { ExecCredentialPlugin, parseExecCredential, EXEC_API_VERSIONS } from './exec-plugin.ts';
export type { ExecCredentialResult, ExecPluginOptions } from './exec-plugin.ts';
