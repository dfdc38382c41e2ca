package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	apiserverapp "k8s.io/kubernetes/cmd/kube-apiserver/app"
)

// auditPolicy logs every request at Metadata level (who, verb, resource,
// userAgent, response code; no bodies). RequestReceived is omitted so each
// request yields one ResponseComplete event (long-running requests such as
// watches also yield a ResponseStarted event).
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`

// runAPIServer runs kube-apiserver with flags derived from a `certs` directory.
// Arguments after "--" are passed to kube-apiserver verbatim and win over ours.
func runAPIServer(args []string) int {
	var extra []string
	for i, a := range args {
		if a == "--" {
			args, extra = args[:i], args[i+1:]
			break
		}
	}
	fs := flag.NewFlagSet("apiserver", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory written by `certs` (required)")
	etcd := fs.String("etcd", "http://127.0.0.1:2379", "etcd client URL")
	port := fs.Int("port", 6443, "secure port on 127.0.0.1")
	auditLog := fs.String("audit-log", "", "write a JSON-lines audit log (Metadata level, every request) to this path")
	auditPolicyFile := fs.String("audit-policy", "", "audit policy file (default: log every request at Metadata level)")
	verbosity := fs.Int("v", 0, "klog verbosity")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "apiserver: --dir is required")
		return 2
	}
	p := func(name string) string { return filepath.Join(*dir, name) }

	kargs := []string{
		"--etcd-servers=" + *etcd,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", *port),
		"--cert-dir=" + p("apiserver-certs"),
		"--tls-cert-file=" + p(fileServingCert),
		"--tls-private-key-file=" + p(fileServingKey),
		"--client-ca-file=" + p(fileCACert),
		"--token-auth-file=" + p(fileTokens),
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=10.0.0.0/16",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + p(fileSAPub),
		"--service-account-signing-key-file=" + p(fileSAKey),
		"--endpoint-reconciler-type=none",
		"--allow-privileged=true",
		"--profiling=false",
		fmt.Sprintf("--v=%d", *verbosity),
	}
	if *auditLog != "" {
		policy := *auditPolicyFile
		if policy == "" {
			policy = p("audit-policy.yaml")
			if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "apiserver:", err)
				return 1
			}
		}
		kargs = append(kargs,
			"--audit-policy-file="+policy,
			"--audit-log-path="+*auditLog,
			"--audit-log-format=json",
			"--audit-log-mode=blocking",
			"--audit-log-maxsize=0",
			"--audit-log-maxbackup=0",
		)
	}
	kargs = append(kargs, extra...)
	fmt.Fprintf(os.Stderr, "kube-apiserver %s\n", strings.Join(kargs, " "))

	// Loopback clients derive their User-Agent from os.Args[0]: look like upstream.
	os.Args[0] = "kube-apiserver"
	cmd := apiserverapp.NewAPIServerCommand()
	cmd.SetArgs(kargs)
	return cli.Run(cmd)
}
