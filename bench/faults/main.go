// Command faults is the long network fault run (issue 26): for each storage
// emulator and each fault kind it puts a Toxiproxy proxy between cloudmem
// and the server, lets 8 writers insert lines into one file for -per while
// the fault comes and goes (-on, -off), and prints one table row: commands
// made, acknowledged and refused, lines lost, duplicated or unknown at the
// end, commands slower than -bound, the slowest. The short run of the same
// check is TestNetworkFaults (integration), which CI makes.
//
// Everything is on loopback, and the run stops by itself (about 20 times
// -per). It reads the servers' settings as the integration tests do, and
// needs Toxiproxy's API (integration/toxiproxy.sh), from this directory:
//
//	bash ../integration/toxiproxy.sh up
//	eval "$(bash ../integration/emulators.sh env)" "$(bash ../integration/toxiproxy.sh env)"
//	go run ./faults -per 15s
//
// It exits with status 1 when a line was lost, duplicated or unknown, or a
// command was late; docs/netfaults.md has a run's table.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	_ "github.com/cloudmem/cloudmem/backends/all"
	"github.com/cloudmem/cloudmem/backends/azure"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/internal/faultrun"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/storeurl"
)

// backend is one emulator: the address the proxy forwards to and the store
// URL through the proxy at addr, over directory dir.
type backend struct {
	name, upstream string
	url            func(addr, dir string) string
	setup          func(addr string) // before the store opens: settings that live outside the URL
}

func main() {
	per := flag.Duration("per", 15*time.Second, "how long the writers insert, per backend and fault")
	on := flag.Duration("on", 2*time.Second, "how long the fault stays on each time")
	off := flag.Duration("off", 2*time.Second, "how long it stays off between")
	writers := flag.Int("writers", 8, "concurrent writers on the one file")
	timeout := flag.Duration("timeout", time.Second, "the store URLs' timeout= (how long one storage call may take)")
	bound := flag.Duration("bound", 45*time.Second, "how long a command may take before it counts as late")
	only := flag.String("backends", "s3,gcs,azure,redis", "the backends to run, comma-separated")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("faults: ")

	api := need("CLOUDMEM_TOXIPROXY")
	ctx := context.Background()
	failed := false
	fmt.Printf("| Backend | Fault | Commands | Acknowledged / refused | Lost | Duplicated | Unknown | Late | Slowest |\n")
	fmt.Printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, b := range backends(*timeout) {
		if !strings.Contains(","+*only+",", ","+b.name+",") {
			continue
		}
		for _, f := range faultrun.Faults {
			res, err := runOne(ctx, api, b, f, faultrun.Run{Fault: f, Path: "/memories/f.md", Writers: *writers,
				Duration: *per, On: *on, Off: *off, Bound: *bound})
			if err != nil {
				log.Fatalf("%s, %s: %v", b.name, f.Name, err)
			}
			if res.Lost+res.Duplicated+res.Unknown+res.Late > 0 {
				failed = true
			}
			fmt.Printf("| %s | %s | %s |\n", b.name, f.Name, res.Row())
		}
	}
	if failed {
		log.Fatal("a line was lost, duplicated or unknown, or a command was late (the rows above)")
	}
}

// runOne makes one run of r over backend b through a new proxy, and
// empties its directory afterwards through a store that bypasses the proxy.
func runOne(ctx context.Context, api string, b backend, f faultrun.Fault, r faultrun.Run) (faultrun.Result, error) {
	dir := fmt.Sprintf("netfault-long/%d-%d", time.Now().UnixNano(), os.Getpid())
	proxy, err := faultrun.NewProxy(api, "long-"+b.name+"-"+strings.ReplaceAll(f.Name, " ", "-")+"-"+dir[len("netfault-long/"):], b.upstream)
	if err != nil {
		return faultrun.Result{}, err
	}
	defer proxy.Delete()
	if b.setup != nil {
		b.setup(proxy.Listen)
	}
	s, err := storeurl.Open(ctx, b.url(proxy.Listen, dir))
	if err != nil {
		return faultrun.Result{}, err
	}
	defer blob.Close(s)
	r.Handler, err = memory.New(s, memory.Options{Logger: slog.New(slog.DiscardHandler), MaxFiles: -1})
	if err != nil {
		return faultrun.Result{}, err
	}
	r.Proxy = proxy
	res, err := r.Do(ctx)
	if b.setup != nil {
		b.setup(b.upstream)
	}
	return res, errors.Join(err, empty(ctx, b.url(b.upstream, dir)))
}

// empty deletes what a run left in the store at rawURL.
func empty(ctx context.Context, rawURL string) error {
	s, err := storeurl.Open(ctx, rawURL)
	if err != nil {
		return err
	}
	defer blob.Close(s)
	infos, err := blob.ListAll(ctx, s, "")
	if err != nil {
		return err
	}
	var errs []error
	for _, info := range infos {
		if err := s.Delete(ctx, info.Key, blob.Cond{}); err != nil && !errors.Is(err, blob.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// backends are the four emulators, from the settings emulators.sh env prints.
func backends(timeout time.Duration) []backend {
	t := "timeout=" + timeout.String()
	bucket := need("CLOUDMEM_TEST_BUCKET")
	conn := need("CLOUDMEM_TEST_AZURE_CONNECTION_STRING")
	azureHost := hostOf(connField(conn, "BlobEndpoint"))
	return []backend{
		{"s3", hostOf(need("CLOUDMEM_TEST_S3_ENDPOINT")), func(addr, dir string) string {
			return "s3://" + bucket + "/" + dir + "?endpoint=http://" + addr + "&path_style=true&region=us-east-1&" + t
		}, nil},
		{"gcs", need("STORAGE_EMULATOR_HOST"), func(addr, dir string) string {
			return "gs://" + bucket + "/" + dir + "?endpoint=http://" + addr + "&" + t
		}, nil},
		{"azure", azureHost, func(_, dir string) string { return "azblob://" + bucket + "/" + dir + "?" + t },
			func(addr string) { os.Setenv(azure.ConnectionStringEnv, strings.Replace(conn, azureHost, addr, 1)) }},
		{"redis", need("CLOUDMEM_TEST_REDIS_ADDR"), func(addr, dir string) string {
			return "redis://" + addr + "/0?prefix=" + dir + "&" + t
		}, nil},
	}
}

// need returns an environment variable, or stops the run saying how to set it.
func need(name string) string {
	v := os.Getenv(name)
	if v == "" {
		log.Fatalf("%s is not set: eval \"$(bash ../integration/emulators.sh env)\" \"$(bash ../integration/toxiproxy.sh env)\"", name)
	}
	return v
}

// hostOf returns the host:port of a URL.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		log.Fatalf("no host in %q", raw)
	}
	return u.Host
}

// connField returns one field of an Azure connection string.
func connField(conn, name string) string {
	for part := range strings.SplitSeq(conn, ";") {
		if v, ok := strings.CutPrefix(part, name+"="); ok {
			return v
		}
	}
	return ""
}
