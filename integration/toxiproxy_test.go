package integration

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/collectors"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/cloudmem/cloudmem/backends/azure"
	"github.com/cloudmem/cloudmem/memory"
)

// faultProxy starts a Toxiproxy proxy (the real proxy, run in this
// process) in front of the server at upstream (host:port) and returns it
// and the address to dial instead; it stops with the test.
func faultProxy(t *testing.T, name, upstream string) (*toxiproxy.Proxy, string) {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	srv.Metrics.ProxyMetrics = collectors.NewProxyMetricCollectors()
	p := toxiproxy.NewProxy(srv, name, "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		t.Fatalf("toxiproxy: %v", err)
	}
	t.Cleanup(p.Stop)
	return p, p.Listen
}

// The faults, as Toxiproxy's JSON toxics: each on the answers (downstream),
// where a body is cut, held or delayed.
var faults = []struct{ name, toxic string }{
	{"latency", `{"name":"f","type":"latency","stream":"downstream","attributes":{"latency":300,"jitter":100}}`},
	{"reset mid-body", `{"name":"f","type":"limit_data","stream":"downstream","attributes":{"bytes":700}}`},
	{"blackhole", `{"name":"f","type":"timeout","stream":"downstream","attributes":{"timeout":0}}`},
	{"slow bandwidth", `{"name":"f","type":"bandwidth","stream":"downstream","attributes":{"rate":16}}`},
	{"slicer", `{"name":"f","type":"slicer","stream":"downstream","attributes":{"average_size":32,"size_variation":16,"delay":200}}`},
}

// TestNetworkFaults (issue 26, "Real network faults") puts Toxiproxy
// between the store and each server, and for each fault lets 8 writers
// insert lines into one file at once while the fault is on (it goes off
// halfway). Every command must answer within its bound (a storage call
// gives up after timeout=1s; a command's retries are bounded too), and at
// the end, with the fault gone, every acknowledged line must be in the
// file exactly once and nothing else but lines some writer sent. The table
// it logs is in docs/netfaults.md.
func TestNetworkFaults(t *testing.T) {
	s3Endpoint, bucket := s3Server(t)
	gcsBucket := gcsServer(t)
	conn, container := azureServer(t)
	redisAddr := server(t, "Redis", "CLOUDMEM_TEST_REDIS_ADDR")
	s3Host := hostOf(t, s3Endpoint)
	azureHost := hostOf(t, connField(conn, "BlobEndpoint"))
	gcsHost := serverAddrOf(t, "STORAGE_EMULATOR_HOST")

	backends := []struct {
		name, upstream string
		url            func(addr, dir string) string
		setup          func(t *testing.T, addr string)
	}{
		{"s3", s3Host, func(addr, dir string) string {
			return "s3://" + bucket + "/" + dir + "?endpoint=http://" + addr + "&path_style=true&region=us-east-1&timeout=1s"
		}, nil},
		{"gcs", gcsHost, func(addr, dir string) string {
			return "gs://" + gcsBucket + "/" + dir + "?endpoint=http://" + addr + "&timeout=1s"
		}, nil},
		{"azure", azureHost, func(addr, dir string) string { return "azblob://" + container + "/" + dir + "?timeout=1s" },
			func(t *testing.T, addr string) {
				t.Setenv(azure.ConnectionStringEnv, strings.Replace(conn, azureHost, addr, 1))
			}},
		{"redis", redisAddr, func(addr, dir string) string { return "redis://" + addr + "/0?prefix=" + dir + "&timeout=1s" }, nil},
	}
	var table []string
	for _, b := range backends {
		for _, f := range faults {
			t.Run(b.name+"/"+f.name, func(t *testing.T) {
				proxy, addr := faultProxy(t, b.name, b.upstream)
				if b.setup != nil {
					b.setup(t, addr)
				}
				row := runFault(t, proxy, b.url(addr, "netfault/"+uniquePrefix()), f.toxic)
				table = append(table, fmt.Sprintf("| %s | %s | %s |", b.name, f.name, row))
			})
		}
	}
	t.Logf("backend | fault | acknowledged / refused of 24, lost, duplicated, unknown, slowest\n%s", strings.Join(table, "\n"))
}

// runFault runs the writers over the store at rawURL with the toxic on for
// the first half, checks the file, and returns the row of the table.
func runFault(t *testing.T, proxy *toxiproxy.Proxy, rawURL, toxic string) string {
	t.Helper()
	s := openURL(t, rawURL)
	h, err := memory.New(s, memory.Options{Logger: slog.New(slog.DiscardHandler), MaxFiles: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if r := h.Create(ctx, "/memories/f.md", "start\n"); r.IsError {
		t.Fatalf("create before the fault: %s", r.Text)
	}
	if _, err := proxy.Toxics.AddToxicJson(strings.NewReader(toxic)); err != nil {
		t.Fatalf("toxic: %v", err)
	}
	const writers, each = 8, 3
	const bound = 45 * time.Second // 1 s per call, a few calls per attempt, the retries' 20 s of waits
	var (
		mu              sync.Mutex
		acked           []string
		refused         int
		slowest         time.Duration
		start, finished = make(chan struct{}), make(chan struct{})
		wg              sync.WaitGroup
	)
	for w := range writers {
		wg.Go(func() {
			<-start
			for i := range each {
				line := fmt.Sprintf("w%d-%d", w, i)
				began := time.Now()
				r := h.Insert(ctx, "/memories/f.md", 1, line)
				took := time.Since(began)
				mu.Lock()
				slowest = max(slowest, took)
				if r.IsError {
					refused++
				} else {
					acked = append(acked, line)
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	go func() { wg.Wait(); close(finished) }()
	select { // the fault goes off halfway, or when the writers are done
	case <-time.After(3 * time.Second):
	case <-finished:
	}
	if err := proxy.Toxics.RemoveToxic(ctx, "f"); err != nil {
		t.Fatalf("removing the toxic: %v", err)
	}
	<-finished
	data, err := h.ReadFile(ctx, "/memories/f.md")
	if err != nil {
		t.Fatalf("reading the file after the fault: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	count := map[string]int{}
	var unknown []string
	for _, l := range lines {
		count[l]++
		if l != "start" && !sent(l, writers, each) {
			unknown = append(unknown, l)
		}
	}
	var lost, dup int
	for _, l := range acked {
		if count[l] == 0 {
			lost++
		}
	}
	for l, n := range count {
		if n > 1 {
			dup++
			t.Errorf("line %q is in the file %d times", l, n)
		}
	}
	if count["start"] != 1 {
		t.Errorf("the first line is in the file %d times", count["start"])
	}
	if lost > 0 || len(unknown) > 0 {
		t.Errorf("%d acknowledged lines lost, unknown lines %q", lost, unknown)
	}
	if slowest > bound {
		t.Errorf("the slowest command took %v, over %v", slowest, bound)
	}
	if len(acked)+refused != writers*each {
		t.Errorf("%d acknowledged + %d refused, want %d commands", len(acked), refused, writers*each)
	}
	return fmt.Sprintf("%d / %d | %d | %d | %d | %.1f s", len(acked), refused, lost, dup, len(unknown), slowest.Seconds())
}

// sent reports whether l is a line some writer sent: "w{w}-{i}".
func sent(l string, writers, each int) bool {
	var w, i int
	if _, err := fmt.Sscanf(l, "w%d-%d", &w, &i); err != nil {
		return false
	}
	return w >= 0 && w < writers && i >= 0 && i < each && l == fmt.Sprintf("w%d-%d", w, i)
}

// hostOf returns the host:port of a URL.
func hostOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		t.Fatalf("no host in %q", raw)
	}
	return u.Host
}

// serverAddrOf returns the host:port an environment variable names.
func serverAddrOf(t *testing.T, env string) string {
	t.Helper()
	return server(t, env, env)
}
