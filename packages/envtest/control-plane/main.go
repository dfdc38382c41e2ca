// Command control-plane is a multi-call binary that runs a real, local Kubernetes
// control plane built from upstream Go modules: etcd (go.etcd.io/etcd/server/v3),
// kube-apiserver and kube-controller-manager (k8s.io/kubernetes), plus a small
// node-and-pod simulator that stands in for kubelets.
//
// Every component runs as its own child process (`control-plane <subcommand>`),
// because the API server's signal handling and the components' global logging
// state may only be set up once per process. Each long-running subcommand asks
// the kernel to kill it when its parent dies (PR_SET_PDEATHSIG), so a crashed
// launcher never leaves components behind.
//
// Subcommands: certs, etcd, apiserver, controller-manager, simulator, compact, up.
// See README.md in this folder.
package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

const usage = `usage: control-plane <subcommand> [flags]

subcommands:
  certs               generate CA, serving/client certificates, SA keys and kubeconfigs
  etcd                run an embedded etcd server
  apiserver           run kube-apiserver
  controller-manager  run kube-controller-manager
  simulator           keep simulated nodes Ready and run their pods
  compact             compact etcd to its current revision
  up                  run everything (certs, etcd, apiserver, controller-manager, simulator)

Run "control-plane <subcommand> --help" for the flags of a subcommand.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	sub, args := os.Args[1], os.Args[2:]
	var err error
	switch sub {
	case "certs":
		// A writer left running by a killed launcher would write the CA key and the admin
		// token into a state folder the launcher's successor has already swept.
		dieWithParent()
		err = runCerts(args)
	case "etcd":
		dieWithParent()
		err = runEtcd(args)
	case "apiserver":
		dieWithParent()
		os.Exit(runAPIServer(args))
	case "controller-manager":
		dieWithParent()
		os.Exit(runControllerManager(args))
	case "simulator":
		dieWithParent()
		err = runSimulator(args)
	case "compact":
		err = runCompact(args)
	case "up":
		dieWithParent()
		err = runUp(args)
	case "-h", "--help", "help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "unknown subcommand %q\n\n%s", sub, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "control-plane %s: %v\n", sub, err)
		os.Exit(1)
	}
}

// dieWithParent makes the kernel SIGKILL this process when the process that
// started it exits, however it exits. Set CONVERGE_KEEP_ORPHANS=1 to opt out.
//
// The parent may die before the request takes effect (this program's
// initialisers run first): the launcher passes its pid in CONVERGE_PARENT_PID,
// and a process no longer that pid's child exits at once. Without the variable
// the parent is whoever it is when this runs (a parent already gone then is
// not noticed).
func dieWithParent() {
	if os.Getenv("CONVERGE_KEEP_ORPHANS") == "1" {
		return
	}
	ppid := os.Getppid()
	if given, err := strconv.Atoi(os.Getenv("CONVERGE_PARENT_PID")); err == nil && given > 0 {
		ppid = given
	}
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "warning: PR_SET_PDEATHSIG failed: %v\n", err)
		return
	}
	if os.Getppid() != ppid {
		fmt.Fprintf(os.Stderr, "control-plane: the process that started this one (pid %d) is gone; exiting\n", ppid)
		os.Exit(1)
	}
}
