package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// runCompact compacts etcd's history up to its current revision, so that any
// older resourceVersion the API server hands to etcd fails with "410 Gone".
// Prints the compacted revision.
//
// It records the revision under compact_rev_key first, as kube-apiserver's own
// compactor does: the API server watches that key and (within ~15 s) drops the
// watch-cache snapshots older than it, so exact-resourceVersion lists and
// continue tokens from before the compaction then answer 410 as well. Watches
// from a recent resourceVersion are still served from the watch cache's event
// window, as on a real cluster.
func runCompact(args []string) error {
	fs := flag.NewFlagSet("compact", flag.ContinueOnError)
	endpoint := fs.String("etcd", "", "etcd client URL, e.g. http://127.0.0.1:2379 (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *endpoint == "" {
		return fmt.Errorf("--etcd is required")
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{*endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, "compact_rev_key")
	if err != nil {
		return err
	}
	rev := resp.Header.Revision
	if _, err := cli.Put(ctx, "compact_rev_key", strconv.FormatInt(rev, 10)); err != nil {
		return err
	}
	if _, err := cli.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		return err
	}
	fmt.Println(rev)
	return nil
}
