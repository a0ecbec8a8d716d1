package integration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cloudmem/cloudmem/backends/redis"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
	"github.com/cloudmem/cloudmem/memory/memorytest"
	"github.com/cloudmem/cloudmem/storeurl"
)

// The cluster tests start their own three-node Redis Cluster from the
// redis-server binary that emulators.sh installs (REDIS_SERVER names
// another), because a cluster is what proves that every script of the
// store stays within one hash slot: a cluster rejects any other.

// clusterNodes is the number of masters; the 16,384 slots are split evenly.
const clusterNodes = 3

// redisCluster starts a cluster on free loopback ports for this test and
// returns the nodes' addresses. The nodes are killed when the test ends.
func redisCluster(t *testing.T) []string {
	t.Helper()
	bin := os.Getenv("REDIS_SERVER")
	if bin == "" {
		bin = "redis-server"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		missing(t, "redis-server (for a Redis Cluster)", err.Error())
	}
	dir := t.TempDir()
	var addrs []string
	for i := range clusterNodes {
		port := freeClusterPort(t)
		cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--cluster-enabled", "yes", "--cluster-config-file", fmt.Sprintf("nodes-%d.conf", i),
			"--dir", dir, "--save", "", "--appendonly", "no",
			"--logfile", filepath.Join(dir, fmt.Sprintf("node-%d.log", i)))
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting %s: %v", path, err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
		addrs = append(addrs, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := formCluster(ctx, addrs); err != nil {
		t.Fatalf("forming a Redis Cluster from %v: %v (logs in %s)", addrs, err, dir)
	}
	return addrs
}

// freeClusterPort returns a loopback port that is free, and whose cluster
// bus port (port+10000) is free too.
func freeClusterPort(t *testing.T) int {
	t.Helper()
	for range 100 {
		port := 20000 + rand.IntN(20000)
		a, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		b, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+10000)))
		a.Close()
		if err != nil {
			continue
		}
		b.Close()
		return port
	}
	t.Fatal("no free port pair for a cluster node")
	return 0
}

// formCluster assigns each node its share of the slots, introduces them
// to each other, and waits until every node reports the cluster ok.
func formCluster(ctx context.Context, addrs []string) error {
	clients := make([]*goredis.Client, len(addrs))
	for i, addr := range addrs {
		clients[i] = goredis.NewClient(&goredis.Options{Addr: addr})
		defer clients[i].Close()
	}
	const slots = 16384
	for i, c := range clients {
		if err := waitPing(ctx, c); err != nil {
			return err
		}
		first, last := i*slots/len(clients), (i+1)*slots/len(clients)-1
		if err := c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", first, last).Err(); err != nil {
			return fmt.Errorf("CLUSTER ADDSLOTSRANGE on %s: %w", addrs[i], err)
		}
	}
	for _, addr := range addrs[1:] {
		host, port, _ := net.SplitHostPort(addr)
		if err := clients[0].ClusterMeet(ctx, host, port).Err(); err != nil {
			return fmt.Errorf("CLUSTER MEET %s: %w", addr, err)
		}
	}
	for _, c := range clients {
		for {
			info, err := c.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", len(addrs))) {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("the cluster is not ok: %v (last CLUSTER INFO error: %v)", ctx.Err(), err)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

func waitPing(ctx context.Context, c *goredis.Client) error {
	for {
		err := c.Ping(ctx).Err()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s does not answer: %w", c.Options().Addr, errors.Join(ctx.Err(), err))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestRedisCluster runs blobtest and the memory suites over a
// ClusterClient, each store under its own prefix (so its own slot), and
// opens a cluster store from a redis-cluster:// URL.
func TestRedisCluster(t *testing.T) {
	addrs := redisCluster(t)
	client := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true})
	t.Cleanup(func() { client.Close() })
	newStore := func(t *testing.T) blob.Store {
		s, err := redis.Open(t.Context(), client, &redis.Options{Prefix: uniquePrefix()})
		if err != nil {
			t.Fatal(err)
		}
		return s // the cluster goes away with the test
	}
	t.Run("blobtest", func(t *testing.T) { blobtest.Run(t, newStore) })
	t.Run("spec", func(t *testing.T) { memorytest.RunWith(t, newStore, parallelCases) })
	t.Run("concurrency", func(t *testing.T) { memorytest.RunConcurrency(t, newStore) })

	t.Run("url", func(t *testing.T) {
		// Two prefixes that land on different nodes, so that the test
		// shows the client following the slots.
		s1, err := storeurl.Open(t.Context(), "redis-cluster://"+strings.Join(addrs, ",")+"?prefix=a")
		if err != nil {
			t.Fatal(err)
		}
		defer s1.(io.Closer).Close()
		s2, err := storeurl.Open(t.Context(), "redis-cluster://"+addrs[0]+"?prefix=b")
		if err != nil {
			t.Fatal(err)
		}
		defer s2.(io.Closer).Close()
		for i, s := range []blob.Store{s1, s2} {
			if _, err := s.Put(t.Context(), "dir/k", []byte{byte('1' + i)}, blob.Cond{IfAbsent: true}); err != nil {
				t.Fatal(err)
			}
			if err := blob.Rename(t.Context(), s, "dir", "moved"); err != nil {
				t.Fatal(err)
			}
			got, _, err := s.Get(t.Context(), "moved/k", blob.MaxObjectBytes)
			if err != nil || string(got) != string(rune('1'+i)) {
				t.Fatalf("store %d: Get(moved/k) = %q, %v", i+1, got, err)
			}
		}
		slotA, _ := client.ClusterKeySlot(t.Context(), "cm:{a}:idx").Result()
		slotB, _ := client.ClusterKeySlot(t.Context(), "cm:{b}:idx").Result()
		if slotA*clusterNodes/16384 == slotB*clusterNodes/16384 {
			t.Fatalf("prefixes a and b share a node (slots %d and %d): pick others", slotA, slotB)
		}
	})
}
