package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/component-base/cli"
	cmapp "k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

// controllers run by the local control plane. Enough for Deployments,
// Services, garbage collection, namespace deletion and service accounts.
var controllers = []string{
	"garbage-collector-controller",
	"deployment-controller",
	"replicaset-controller",
	"endpointslice-controller",
	"namespace-controller",
	"serviceaccount-controller",
	"serviceaccount-token-controller",
	"clusterrole-aggregation-controller",
	"root-ca-certificate-publisher-controller",
}

// runControllerManager runs kube-controller-manager with flags derived from a
// `certs` directory. Arguments after "--" are passed verbatim and win over ours.
func runControllerManager(args []string) int {
	var extra []string
	for i, a := range args {
		if a == "--" {
			args, extra = args[:i], args[i+1:]
			break
		}
	}
	fs := flag.NewFlagSet("controller-manager", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory written by `certs` (required)")
	verbosity := fs.Int("v", 0, "klog verbosity")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "controller-manager: --dir is required")
		return 2
	}
	p := func(name string) string { return filepath.Join(*dir, name) }
	kargs := []string{
		"--kubeconfig=" + p(fileCMKubecfg),
		"--leader-elect=false",
		"--secure-port=0",
		"--controllers=" + strings.Join(controllers, ","),
		"--service-account-private-key-file=" + p(fileSAKey),
		"--root-ca-file=" + p(fileCACert),
		"--use-service-account-credentials=false",
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		fmt.Sprintf("--v=%d", *verbosity),
	}
	kargs = append(kargs, extra...)
	fmt.Fprintf(os.Stderr, "kube-controller-manager %s\n", strings.Join(kargs, " "))
	// Clients derive their User-Agent from os.Args[0]: look like upstream.
	os.Args[0] = "kube-controller-manager"
	cmd := cmapp.NewControllerManagerCommand()
	cmd.SetArgs(kargs)
	return cli.Run(cmd)
}
