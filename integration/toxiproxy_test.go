package integration

import (
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"

	"github.com/cloudmem/cloudmem/backends/azure"
	"github.com/cloudmem/cloudmem/internal/faultrun"
	"github.com/cloudmem/cloudmem/memory"
)

// faultProxy creates a proxy on the Toxiproxy server that
// integration/toxiproxy.sh starts (CLOUDMEM_TOXIPROXY, its API) in front of
// the server at upstream (host:port), and returns it and the address to
// dial instead; it is deleted with the test.
func faultProxy(t *testing.T, name, upstream string) (*toxiproxy.Proxy, string) {
	t.Helper()
	api := server(t, "Toxiproxy (bash integration/toxiproxy.sh up)", "CLOUDMEM_TOXIPROXY")
	p, err := faultrun.NewProxy(api, name+"-"+uniquePrefix(), upstream)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Delete(); err != nil {
			t.Errorf("deleting the proxy: %v", err)
		}
	})
	return p, p.Listen
}

// TestNetworkFaults (issue 26, "Real network faults") puts a Toxiproxy
// proxy (on the server integration/toxiproxy.sh starts, driven through its
// HTTP API) between the store and each server, and for each fault lets 8
// writers insert 3 lines each into one file at once while the fault is on
// (it goes off after 3 s). Every command must answer within its bound (a storage call
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
		for _, f := range faultrun.Faults {
			t.Run(b.name+"/"+f.Name, func(t *testing.T) {
				proxy, addr := faultProxy(t, b.name, b.upstream)
				if b.setup != nil {
					b.setup(t, addr)
				}
				h, err := memory.New(openURL(t, b.url(addr, "netfault/"+uniquePrefix())),
					memory.Options{Logger: slog.New(slog.DiscardHandler), MaxFiles: -1})
				if err != nil {
					t.Fatal(err)
				}
				res, err := faultrun.Run{Handler: h, Proxy: proxy, Fault: f, Path: "/memories/f.md",
					Writers: 8, Lines: 3, On: 3 * time.Second, Bound: toxicBound}.Do(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if res.Lost+res.Duplicated+res.Unknown+res.Late > 0 || res.Commands != 24 {
					t.Errorf("commands | acknowledged / refused | lost | duplicated | unknown | late | slowest: %s; "+
						"want 24 commands, none lost, duplicated, unknown or late (over %v)", res.Row(), toxicBound)
				}
				table = append(table, fmt.Sprintf("| %s | %s | %s |", b.name, f.Name, res.Row()))
			})
		}
	}
	t.Logf("| backend | fault | commands | acknowledged / refused | lost | duplicated | unknown | late | slowest |\n%s",
		strings.Join(table, "\n"))
}

// toxicBound is how long a command may take under a fault: 1 s per
// storage call (timeout=1s), a few calls per attempt, and the retries' 20 s
// of waits.
const toxicBound = 45 * time.Second

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
