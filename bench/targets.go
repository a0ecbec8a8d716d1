package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"cloud.google.com/go/storage"
	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	goredis "github.com/redis/go-redis/v9"
	"google.golang.org/api/option"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/backends/gcs"
	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/backends/redis"
	"github.com/cloudmem/cloudmem/backends/s3"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/crypt"
)

// A target is one store under test.
type target struct {
	name   string     // as the report names it: "mem", "minio", "age+file", ...
	remote bool       // served over the network by an emulator: fewer iterations
	store  blob.Store // the store the handler and the floor use

	// sdk issues a file view's and a str_replace's requests with the
	// backend's own client, bypassing the Store; nil for mem.
	sdk sdkFloor
	// requests returns how many requests (HTTP requests, Redis commands)
	// the store's client has sent so far; nil when there is no client.
	requests func() int64
	// close releases the client and removes what the target wrote.
	close func(ctx context.Context) error
	// url is the store as a `cloudmem --store` URL, and urlEnv the
	// environment (NAME=value) a cloudmem process needs to open it beyond
	// this process's; url is "" when a process cannot open the store.
	url    string
	urlEnv []string
	// versionBatch is true when the store deletes the sources of a moved
	// directory in one blob.BatchDeleter call (S3's listing and
	// DeleteObjects), not one Delete each.
	versionBatch bool
}

// allTargets lists every target name in report order; opener opens one.
var allTargets = []string{"mem", "file", "minio", "fake-gcs", "azurite", "redis", "age+file", "age+minio"}

// env is what openers need from the run.
type env struct {
	runID string // unique per run: part of every remote prefix
	tmp   string // a directory for file stores, removed after the run

	cliOnce sync.Once // builds cloudmem for the process test (see cli)
	cliPath string
	cliErr  error
}

// open opens the target called name.
func (e *env) open(ctx context.Context, name string) (*target, error) {
	base, encrypt := strings.CutPrefix(name, "age+")
	t, err := e.openBase(ctx, base, name)
	if err != nil || !encrypt {
		return t, err
	}
	return encrypted(ctx, name, t)
}

// openBase opens the unencrypted store of a target; name is the target's
// own name, which sets its prefix.
func (e *env) openBase(ctx context.Context, base, name string) (*target, error) {
	switch base {
	case "mem":
		s := mem.New(nil)
		return &target{name: name, store: s, close: func(context.Context) error { return nil }}, nil
	case "file":
		return e.openFile(ctx, name)
	case "minio":
		return e.openS3(ctx, name)
	case "fake-gcs":
		return e.openGCS(ctx, name)
	case "azurite":
		return e.openAzure(ctx, name)
	case "redis":
		return e.openRedis(ctx, name)
	}
	return nil, fmt.Errorf("unknown backend %q (known: %s)", name, strings.Join(allTargets, ", "))
}

// prefix is the key prefix of a remote target in the shared test bucket.
func (e *env) prefix(name string) string {
	return "cloudmem-bench/" + e.runID + "/" + strings.ReplaceAll(name, "+", "-")
}

// getenv returns the environment variable, or an error saying how to get
// the emulators' settings.
func getenv(name string) (string, error) {
	if v := os.Getenv(name); v != "" {
		return v, nil
	}
	return "", fmt.Errorf("%s is not set: start the emulators and load their settings with\n"+
		"\tbash integration/emulators.sh up && eval \"$(bash integration/emulators.sh env)\"\n"+
		"(bench/run.sh does both)", name)
}

func (e *env) openFile(ctx context.Context, name string) (*target, error) {
	dir := filepath.Join(e.tmp, name)
	s, err := file.Open(ctx, dir, nil)
	if err != nil {
		return nil, err
	}
	raw := filepath.Join(e.tmp, name+"-raw")
	if err := os.MkdirAll(raw, 0o700); err != nil {
		return nil, err
	}
	return &target{
		name: name, store: s, url: dir,
		sdk: &fileFloor{dir: raw},
		close: func(context.Context) error {
			return errors.Join(os.RemoveAll(dir), os.RemoveAll(raw))
		},
	}, nil
}

func (e *env) openS3(ctx context.Context, name string) (*target, error) {
	endpoint, err := getenv("CLOUDMEM_TEST_S3_ENDPOINT")
	if err != nil {
		return nil, err
	}
	bucket, err := getenv("CLOUDMEM_TEST_BUCKET")
	if err != nil {
		return nil, err
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, err
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	n := new(atomic.Int64)
	client := awss3.NewFromConfig(cfg, func(o *awss3.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.UsePathStyle = true
		o.HTTPClient = countedDoer{next: awshttp.NewBuildableClient(), n: n}
	})
	prefix := e.prefix(name)
	s, err := s3.Open(ctx, bucket, prefix, &s3.Options{Client: client})
	if err != nil {
		return nil, err
	}
	t := remoteTarget(name, s, &s3Floor{client: client, bucket: bucket, key: prefix + "-raw/notes.md"}, n.Load,
		func() error { return nil })
	t.url = fmt.Sprintf("s3://%s/%s?endpoint=%s&path_style=true&region=%s", bucket, prefix, url.QueryEscape(endpoint), cfg.Region)
	t.versionBatch = true
	return t, nil
}

func (e *env) openGCS(ctx context.Context, name string) (*target, error) {
	if _, err := getenv("STORAGE_EMULATOR_HOST"); err != nil {
		return nil, err
	}
	bucket, err := getenv("CLOUDMEM_TEST_BUCKET")
	if err != nil {
		return nil, err
	}
	n := new(atomic.Int64)
	client, err := storage.NewClient(ctx, storage.WithJSONReads(),
		option.WithHTTPClient(&http.Client{Transport: countedTransport{next: newTransport(), n: n}}))
	if err != nil {
		return nil, err
	}
	prefix := e.prefix(name)
	s, err := gcs.Open(ctx, bucket, prefix, &gcs.Options{Client: client})
	if err != nil {
		client.Close()
		return nil, err
	}
	floor := &gcsFloor{obj: client.Bucket(bucket).Object(prefix + "-raw/notes.md")}
	t := remoteTarget(name, s, floor, n.Load, client.Close)
	t.url = "gs://" + bucket + "/" + prefix // STORAGE_EMULATOR_HOST is in the environment
	return t, nil
}

func (e *env) openRedis(ctx context.Context, name string) (*target, error) {
	addr, err := getenv("CLOUDMEM_TEST_REDIS_ADDR")
	if err != nil {
		return nil, err
	}
	// As the URL opener configures it: the defaults, plus deadlines taken
	// from the context.
	client := goredis.NewClient(&goredis.Options{Addr: addr, ContextTimeoutEnabled: true})
	n := new(atomic.Int64)
	client.AddHook(commandCounter{n: n})
	prefix := e.prefix(name)
	s, err := redis.Open(ctx, client, &redis.Options{Prefix: prefix})
	if err != nil {
		client.Close()
		return nil, err
	}
	floor := newRedisFloor(client, "{"+prefix+"-raw}:notes.md")
	t := remoteTarget(name, s, floor, n.Load, client.Close)
	t.url = "redis://" + addr + "/0?prefix=" + url.QueryEscape(prefix)
	return t, nil
}

// remoteTarget completes a target served by an emulator. Closing it
// deletes every key under the store, the SDK floor's object, and then
// closes the client with closeClient.
func remoteTarget(name string, s blob.Store, floor sdkFloor, requests func() int64, closeClient func() error) *target {
	return &target{
		name: name, remote: true, store: s, sdk: floor, requests: requests,
		close: func(ctx context.Context) error {
			return errors.Join(wipe(ctx, s), floor.cleanup(ctx), closeClient())
		},
	}
}

// encrypted wraps t's store with age encryption to a new key. Its SDK
// floor is t's (unencrypted), and closing it closes t, which wipes the
// inner store, the encryption layer's key object included.
func encrypted(ctx context.Context, name string, t *target) (*target, error) {
	identity, recipient, err := crypt.GenerateIdentity()
	if err != nil {
		return nil, errors.Join(err, t.close(ctx))
	}
	ids, err := crypt.ParseIdentities(identity)
	if err != nil {
		return nil, errors.Join(err, t.close(ctx))
	}
	rcpts, err := crypt.ParseRecipients(recipient)
	if err != nil {
		return nil, errors.Join(err, t.close(ctx))
	}
	s, err := crypt.Wrap(t.store, crypt.Config{Recipients: rcpts, Identities: ids})
	if err != nil {
		return nil, errors.Join(err, t.close(ctx))
	}
	return &target{
		name: name, remote: t.remote, store: s,
		sdk: t.sdk, requests: t.requests, close: t.close,
		versionBatch: t.versionBatch, // the encrypting store forwards blob.BatchDeleter
	}, nil
}

// wipe deletes every key of s (blob.DeleteKeys: in batches where the store
// has them, otherwise 16 at a time).
func wipe(ctx context.Context, s blob.Store) error {
	infos, err := blob.ListAll(ctx, s, "")
	if err != nil {
		return err
	}
	return blob.DeleteKeys(ctx, s, blob.Keys(infos))
}

// parallel calls f(ctx, i) for every i in [0, n), 16 at a time, and returns
// the first error; after an error it starts no more calls.
func parallel(ctx context.Context, n int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		next  atomic.Int64
		once  sync.Once
		first error
	)
	for range min(16, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(ctx, i); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// newTransport is the HTTP transport of the GCS and Azure clients: Go's
// default, with enough idle connections kept for 64 concurrent writers.
func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 100
	return t
}

// countedTransport counts the requests it sends.
type countedTransport struct {
	next http.RoundTripper
	n    *atomic.Int64
}

func (t countedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	return t.next.RoundTrip(r)
}

// countedDoer counts the requests an SDK's HTTP client sends.
type countedDoer struct {
	next interface {
		Do(*http.Request) (*http.Response, error)
	}
	n *atomic.Int64
}

func (d countedDoer) Do(r *http.Request) (*http.Response, error) {
	d.n.Add(1)
	return d.next.Do(r)
}

// commandCounter is a go-redis hook that counts the commands sent.
type commandCounter struct{ n *atomic.Int64 }

func (h commandCounter) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h commandCounter) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}

func (h commandCounter) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		h.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}
