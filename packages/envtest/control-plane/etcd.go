package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// runEtcd runs a single-member etcd server in this process until SIGINT/SIGTERM.
// fsync is disabled: the data is throw-away and tests want speed.
func runEtcd(args []string) error {
	fs := flag.NewFlagSet("etcd", flag.ContinueOnError)
	dataDir := fs.String("data-dir", "", "data directory (required)")
	clientPort := fs.Int("client-port", 2379, "client port on 127.0.0.1")
	peerPort := fs.Int("peer-port", 2380, "peer port on 127.0.0.1")
	logLevel := fs.String("log-level", "warn", "etcd log level: debug, info, warn, error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dataDir == "" {
		return fmt.Errorf("--data-dir is required")
	}

	cfg := embed.NewConfig()
	cfg.Name = "converge"
	cfg.Dir = *dataDir
	cfg.UnsafeNoFsync = true
	cfg.LogLevel = *logLevel
	cu := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", *clientPort)}
	pu := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", *peerPort)}
	cfg.ListenClientUrls = []url.URL{cu}
	cfg.AdvertiseClientUrls = []url.URL{cu}
	cfg.ListenPeerUrls = []url.URL{pu}
	cfg.AdvertisePeerUrls = []url.URL{pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
		fmt.Printf("etcd ready on %s\n", cu.String())
	case <-time.After(60 * time.Second):
		e.Server.Stop()
		return fmt.Errorf("etcd did not become ready within 60s")
	}

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case s := <-sig:
		fmt.Printf("etcd: %v, stopping\n", s)
		return nil
	case err := <-e.Err():
		return err
	}
}
