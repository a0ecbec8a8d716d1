package integration

import (
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A server the tests need and the tests that need nothing else.
type serverTests struct {
	name, envVar string
	tests        string // a -test.skip pattern of the top-level tests that need only this server
}

var servers = []serverTests{
	{"MinIO (S3)", "CLOUDMEM_TEST_S3_ENDPOINT", "^Test(S3|SyncS3)"},
	{"fake-gcs-server", "STORAGE_EMULATOR_HOST", "^Test(GCS|SyncGCS)"},
	{"Azurite", "CLOUDMEM_TEST_AZURE_CONNECTION_STRING", "^Test(Azure|SyncAzure)"},
	{"Redis", "CLOUDMEM_TEST_REDIS_ADDR", "^Test(Redis|SyncRedis)"},
}

// acrossServers are the tests that run over every server at once.
const acrossServers = "^Test(CopyAcrossServers|Encrypted|HistoryOverServers|Mounts|ExpiryOverServers)"

// TestMain, when neither CI nor CLOUDMEM_INTEGRATION is set, probes each
// server once and skips the tests of every missing one as a whole, saying
// why once, instead of letting each of its hundreds of subtests skip on its
// own. With CI or CLOUDMEM_INTEGRATION set it changes nothing: every test
// runs, and one whose server is missing fails (see missing).
func TestMain(m *testing.M) {
	flag.Parse()
	setParallel()
	if !strict() {
		var skip []string
		for _, s := range servers {
			if why := probe(s.envVar); why != "" {
				fmt.Fprintf(os.Stderr, "integration: skipping the %s tests: %s\n", s.name, why)
				skip = append(skip, s.tests)
			}
		}
		if len(skip) == len(servers) {
			skip = append(skip, acrossServers)
		}
		if len(skip) > 0 {
			fmt.Fprintf(os.Stderr, "integration: start the servers with: bash integration/emulators.sh up && eval \"$(bash integration/emulators.sh env)\"\n")
			if prev := flag.Lookup("test.skip").Value.String(); prev != "" {
				skip = append(skip, prev)
			}
			if err := flag.Set("test.skip", strings.Join(skip, "|")); err != nil {
				fmt.Fprintln(os.Stderr, "integration:", err)
				os.Exit(2)
			}
		}
	}
	os.Exit(m.Run())
}

// defaultParallel is how many parallel subtests (the SPEC suites' cases,
// each on a store of its own) run at once unless -parallel says otherwise.
// go test's default is GOMAXPROCS, but these cases spend most of their time
// waiting for a server, not on a CPU: on 2 cores, 8 at once halve the
// package's time.
const defaultParallel = 8

// setParallel sets -test.parallel to defaultParallel when the command line
// did not set it.
func setParallel() {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(defaultParallel)); err != nil {
			fmt.Fprintln(os.Stderr, "integration:", err)
			os.Exit(2)
		}
	}
}

// probe returns why the server envVar names cannot be used ("" when it
// answers): the same check as server, without a test.
func probe(envVar string) string {
	val := os.Getenv(envVar)
	if val == "" {
		return envVar + " is not set"
	}
	addr := val
	if strings.Contains(val, "BlobEndpoint=") { // an Azure connection string
		for part := range strings.SplitSeq(val, ";") {
			if v, ok := strings.CutPrefix(part, "BlobEndpoint="); ok {
				addr = v
			}
		}
	}
	if u, err := url.Parse(addr); err == nil && u.Host != "" {
		addr = u.Host
	}
	conn, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		return fmt.Sprintf("%s does not answer: %v", envVar, err)
	}
	conn.Close()
	return ""
}
