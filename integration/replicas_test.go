package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/memory"
)

// nginxBinary returns nginx ($CLOUDMEM_NGINX, which integration/nginx.sh
// prints, else the one on PATH); without it the test fails under CI and
// skips otherwise.
func nginxBinary(t *testing.T) string {
	t.Helper()
	for _, bin := range []string{os.Getenv("CLOUDMEM_NGINX"), "nginx", "/usr/sbin/nginx"} {
		if bin == "" {
			continue
		}
		if path, err := exec.LookPath(bin); err == nil {
			return path
		}
	}
	msg := "nginx is missing. Install it with:\n\texport CLOUDMEM_NGINX=$(bash integration/nginx.sh)"
	if strict() {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// startNginx runs nginx on a loopback port, balancing round robin over the
// loopback ports of upstreams, and returns its URL. A replica that does not
// take the connection is skipped (the request goes to the next); a request
// a replica took and did not answer gets 502, for the client to retry.
func startNginx(t *testing.T, upstreams []int) string {
	t.Helper()
	bin := nginxBinary(t)
	dir := t.TempDir()
	port := freePort(t)
	var servers strings.Builder
	for _, p := range upstreams {
		fmt.Fprintf(&servers, "\t\tserver 127.0.0.1:%d max_fails=1 fail_timeout=10s;\n", p)
	}
	// One process (no workers), so that killing it at the end leaves nothing behind.
	conf := fmt.Sprintf(`daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path %[1]s/body;
	proxy_temp_path %[1]s/proxy;
	fastcgi_temp_path %[1]s/fastcgi;
	uwsgi_temp_path %[1]s/uwsgi;
	scgi_temp_path %[1]s/scgi;
	upstream cloudmem {
%[2]s		keepalive 64;
	}
	server {
		listen 127.0.0.1:%[3]d;
		location / {
			proxy_pass http://cloudmem;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
			proxy_set_header Host $http_host;
			proxy_buffering off;
			proxy_next_upstream error timeout;
			proxy_connect_timeout 2s;
			proxy_read_timeout 70s;
		}
	}
}
`, dir, servers.String(), port)
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	startProcess(t, "nginx", exec.Command(bin, "-p", dir, "-c", confPath))
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHTTP(t, base+mcpserver.HealthPath)
	return base
}

// startReplicas runs n "cloudmem mcp --http --stateless" processes over
// storeURL and returns them and their ports.
func startReplicas(t *testing.T, bin, storeURL string, n int) ([]*exec.Cmd, []int) {
	t.Helper()
	var cmds []*exec.Cmd
	var ports []int
	for i := range n {
		port := freePort(t)
		cmd := exec.Command(bin, "--store", storeURL, "mcp", "--http", fmt.Sprintf("127.0.0.1:%d", port), "--stateless")
		startProcess(t, fmt.Sprintf("replica-%d", i), cmd)
		waitHTTP(t, fmt.Sprintf("http://127.0.0.1:%d%s", port, mcpserver.HealthPath))
		cmds, ports = append(cmds, cmd), append(ports, port)
	}
	return cmds, ports
}

// insertRun is what a run of insertClients counted.
type insertRun struct {
	acked     []string        // the lines acknowledged
	refused   atomic.Int64    // conflicts, retried
	errors    atomic.Int64    // transport errors and 5xx, retried
	firstErr  atomic.Value    // the first of them, for the log
	latencies []time.Duration // of every call answered
	mu        sync.Mutex
}

func (r *insertRun) add(line string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if line != "" {
		r.acked = append(r.acked, line)
	}
	r.latencies = append(r.latencies, d)
}

func (r *insertRun) failed(err error) {
	r.errors.Add(1)
	r.firstErr.CompareAndSwap(nil, err.Error())
}

func (r *insertRun) percentile(p float64) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := slices.Clone(r.latencies)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// replicaFiles are the shared files the clients insert into.
var replicaFiles = []string{"/memories/a.md", "/memories/b.md", "/memories/c.md", "/memories/d.md"}

// insertClients runs clients clients, released at once, each inserting
// perClient lines (one call each) into the shared files through endpoint;
// a call that fails or is refused is retried (on a new connection after a
// failure), up to 50 times. at[n] is called when n lines are acknowledged.
func insertClients(t *testing.T, endpoint string, clients, perClient int, at map[int64]func()) *insertRun {
	t.Helper()
	run := &insertRun{}
	connect := func() (*mcp.ClientSession, error) {
		tr := &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1, DisableStandaloneSSE: true}
		return mcp.NewClient(&mcp.Implementation{Name: "replicas"}, nil).Connect(t.Context(), tr, nil)
	}
	var ackedCount atomic.Int64
	start := make(chan struct{})
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			<-start
			var cs *mcp.ClientSession
			defer func() {
				if cs != nil {
					cs.Close()
				}
			}()
			for j := range perClient {
				line := fmt.Sprintf("c%02d-%04d", c, j)
				file := replicaFiles[(c+j)%len(replicaFiles)]
				input, _ := json.Marshal(map[string]any{"command": "insert", "path": file, "insert_line": 0, "insert_text": line})
				for attempt := 0; ; attempt++ {
					if attempt == 50 {
						t.Errorf("%s: 50 attempts, none acknowledged", line)
						return
					}
					if cs == nil {
						var err error
						if cs, err = connect(); err != nil {
							run.failed(err)
							time.Sleep(50 * time.Millisecond)
							continue
						}
					}
					began := time.Now()
					res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: mcpserver.ToolName, Arguments: json.RawMessage(input)})
					if err != nil {
						run.failed(err)
						cs.Close()
						cs = nil
						time.Sleep(50 * time.Millisecond)
						continue
					}
					r, err := mcpserver.ResultOf(res)
					switch {
					case err == nil && r == (memory.Result{Text: "The file " + file + " has been edited."}):
						run.add(line, time.Since(began))
					case err == nil && r.IsError && strings.Contains(r.Text, "was changed by another writer at the same time"):
						run.refused.Add(1)
						run.add("", time.Since(began))
						continue
					default:
						t.Errorf("%s: %+v, %v", line, r, err)
						return
					}
					break
				}
				if f := at[ackedCount.Add(1)]; f != nil {
					f()
				}
			}
		})
	}
	close(start)
	wg.Wait()
	return run
}

var replicaLine = regexp.MustCompile(`^c\d\d-\d{4}$`)

// checkInserts reads the shared files from store: every acknowledged line is
// there, every line is whole (a client's line or the first "end"), and it
// returns how many lines are there and how many of them twice.
func checkInserts(t *testing.T, store blob.Store, run *insertRun) (present, twice int) {
	t.Helper()
	seen := map[string]int{}
	for _, f := range replicaFiles {
		data, _, err := store.Get(t.Context(), strings.TrimPrefix(f, "/memories/"), blob.MaxObjectBytes)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		lines := strings.Split(string(data), "\n")
		if len(lines) < 2 || lines[len(lines)-2] != "end" || lines[len(lines)-1] != "" {
			t.Errorf("%s does not end with its first line, end: %q", f, data)
			continue
		}
		for _, l := range lines[:len(lines)-2] {
			if !replicaLine.MatchString(l) {
				t.Errorf("%s holds a line no client wrote: %q", f, l)
			}
			seen[l]++
		}
	}
	for _, l := range run.acked {
		if seen[l] == 0 {
			t.Errorf("%s was acknowledged but is in no file", l)
		}
	}
	for _, n := range seen {
		present += n
		if n > 1 {
			twice++
		}
	}
	return present, twice
}

// replicaInserts is how many lines each client inserts: 4 in CI (seconds),
// more with $CLOUDMEM_REPLICA_INSERTS (the run of docs/mcp.md).
func replicaInserts(t *testing.T) int {
	if v := os.Getenv("CLOUDMEM_REPLICA_INSERTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("CLOUDMEM_REPLICA_INSERTS=%q is not a positive number", v)
		}
		return n
	}
	return 4
}

// TestReplicas runs 32 clients inserting lines into four shared files
// through nginx, round robin over one and over three stateless cloudmem
// replicas on one MinIO store and on one Redis store; in the three-replica
// runs one replica is killed (SIGKILL, with no warning) when a third of the
// lines are in, and another is sent SIGTERM at two thirds, which it must
// drain and exit 0 on. Every acknowledged line is in its file, every file is
// whole, every client whose call failed succeeded on a retry, and no
// command answers a storage failure (on Redis, the locks the killed replica
// held are leases that run out in 5 s, well within a command's timeout).
func TestReplicas(t *testing.T) {
	bin := buildCLI(t)
	stores := []struct {
		name string
		url  func(t *testing.T, prefix string) string
	}{
		{"minio", func(t *testing.T, prefix string) string {
			endpoint := server(t, "MinIO (S3)", "CLOUDMEM_TEST_S3_ENDPOINT")
			return "s3://" + testBucket(t, "MinIO (S3)") + "/" + prefix + "?endpoint=" + endpoint + "&path_style=true&region=us-east-1"
		}},
		{"redis", func(t *testing.T, prefix string) string {
			return "redis://" + server(t, "Redis", "CLOUDMEM_TEST_REDIS_ADDR") + "/0?prefix=" + prefix
		}},
	}
	const clients = 32
	perClient := replicaInserts(t)
	for _, st := range stores {
		for _, n := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/%d", st.name, n), func(t *testing.T) {
				storeURL := st.url(t, "replicas/"+uniquePrefix())
				store := openURL(t, storeURL)
				for _, f := range replicaFiles {
					if _, err := store.Put(t.Context(), strings.TrimPrefix(f, "/memories/"), []byte("end\n"), blob.Cond{}); err != nil {
						t.Fatal(err)
					}
				}
				replicas, ports := startReplicas(t, bin, storeURL, n)
				base := startNginx(t, ports)
				at := map[int64]func(){}
				drained := make(chan error, 1)
				if n > 1 {
					total := int64(clients * perClient)
					at[total/3] = func() { // one replica dies, mid-run, unwarned
						if err := replicas[1].Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
							t.Errorf("killing replica 1: %v", err)
						}
					}
					at[2*total/3] = func() { // another is told to stop: it drains
						if err := replicas[2].Process.Signal(syscall.SIGTERM); err != nil {
							t.Errorf("SIGTERM to replica 2: %v", err)
						}
						go func() { drained <- replicas[2].Wait() }()
					}
				}
				began := time.Now()
				run := insertClients(t, base+mcpserver.MCPPath, clients, perClient, at)
				took := time.Since(began)
				present, twice := checkInserts(t, store, run)
				t.Logf("%s, %d replica(s)%s: %d clients x %d inserts: %d acknowledged, %d present (%d twice), %d conflicts retried, %d errors retried; per call p50 %v, p99 %v; %v in all",
					st.name, n, map[bool]string{true: ", one killed, one drained", false: ""}[n > 1], clients, perClient, len(run.acked), present, twice,
					run.refused.Load(), run.errors.Load(), run.percentile(0.50).Round(time.Millisecond), run.percentile(0.99).Round(time.Millisecond), took.Round(time.Millisecond))
				if n > 1 {
					select {
					case err := <-drained:
						if err != nil {
							t.Errorf("replica 2 after SIGTERM: %v, want exit 0", err)
						}
					case <-time.After(40 * time.Second):
						t.Errorf("replica 2 did not exit within 40 s of SIGTERM")
					}
				}
				if len(run.acked) != clients*perClient {
					t.Errorf("%d acknowledged, want %d (the first error: %v)", len(run.acked), clients*perClient, run.firstErr.Load())
				}
			})
		}
	}
}
