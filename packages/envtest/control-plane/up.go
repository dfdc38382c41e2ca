package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// runUp runs the whole control plane from one command, for Go-only use and
// debugging. (The TypeScript launcher in src/control-plane does the same with
// finer control.) It blocks until SIGINT/SIGTERM, then stops every component
// and removes its temporary state directory.
func runUp(args []string) error {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "also copy the admin kubeconfig to this path")
	nodes := fs.Int("nodes", 1, "number of simulated nodes")
	auditLog := fs.String("audit-log", "", "write the API server audit log to this path")
	if err := fs.Parse(args); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "converge-cp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	server := fmt.Sprintf("https://127.0.0.1:%d", ports[2])
	pki := filepath.Join(dir, "pki")
	if err := writeCerts(pki, server); err != nil {
		return err
	}

	var children []*exec.Cmd
	stopAll := func() {
		for i := len(children) - 1; i >= 0; i-- {
			c := children[i]
			_ = c.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = c.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = c.Process.Kill()
				<-done
			}
		}
	}
	defer stopAll()
	start := func(name string, a ...string) error {
		logf, err := os.Create(filepath.Join(dir, name+".log"))
		if err != nil {
			return err
		}
		c := exec.Command(self, append([]string{name}, a...)...)
		c.Stdout, c.Stderr = logf, logf
		c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		// This process is the parent dieWithParent checks (the last value of a key wins).
		c.Env = append(os.Environ(), "CONVERGE_PARENT_PID="+strconv.Itoa(os.Getpid()))
		if err := c.Start(); err != nil {
			return err
		}
		children = append(children, c)
		return nil
	}

	t0 := time.Now()
	if err := start("etcd", "--data-dir", filepath.Join(dir, "etcd"),
		"--client-port", fmt.Sprint(ports[0]), "--peer-port", fmt.Sprint(ports[1])); err != nil {
		return err
	}
	if err := waitHTTP(etcdURL+"/health", 60*time.Second); err != nil {
		return fmt.Errorf("etcd: %w (see %s)", err, filepath.Join(dir, "etcd.log"))
	}
	apiArgs := []string{"--dir", pki, "--etcd", etcdURL, "--port", fmt.Sprint(ports[2])}
	if *auditLog != "" {
		apiArgs = append(apiArgs, "--audit-log", *auditLog)
	}
	if err := start("apiserver", apiArgs...); err != nil {
		return err
	}
	if err := waitHTTP(server+"/readyz", 120*time.Second); err != nil {
		return fmt.Errorf("apiserver: %w (see %s)", err, filepath.Join(dir, "apiserver.log"))
	}
	if err := start("controller-manager", "--dir", pki); err != nil {
		return err
	}
	if err := start("simulator", "--kubeconfig", filepath.Join(pki, fileSimKubecfg),
		"--nodes", fmt.Sprint(*nodes)); err != nil {
		return err
	}
	kc := filepath.Join(pki, fileAdminKubecfg)
	if *kubeconfig != "" {
		b, err := os.ReadFile(kc)
		if err != nil {
			return err
		}
		if err := os.WriteFile(*kubeconfig, b, 0o600); err != nil {
			return err
		}
		kc = *kubeconfig
	}
	fmt.Printf("control plane ready: kubeconfig=%s server=%s etcd=%s (%.1fs)\n", kc, server, etcdURL,
		time.Since(t0).Seconds())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	exited := make(chan string, len(children))
	for _, c := range children {
		go func(c *exec.Cmd) {
			_, _ = c.Process.Wait()
			exited <- filepath.Base(c.Args[1])
		}(c)
	}
	select {
	case s := <-sig:
		fmt.Printf("%v: stopping\n", s)
		return nil
	case name := <-exited:
		return fmt.Errorf("component %s exited unexpectedly (logs in %s)", name, dir)
	}
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func waitHTTP(url string, timeout time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // readiness probe only
	}}
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		resp, err := client.Get(url)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, body)
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("not ready after %s: %s", timeout, last)
}
