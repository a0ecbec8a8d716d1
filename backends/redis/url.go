package redis

import (
	"context"
	"fmt"
	"maps"
	"math"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

func init() {
	for _, scheme := range []string{Scheme, SchemeTLS, SchemeCluster, SchemeClusterTLS} {
		storeurl.Register(scheme, backend)
	}
}

// backend is what this package registers for each of its schemes: the
// prefix is applied here, inside the keys' hash tag (see keys.go).
var backend = storeurl.Backend{Name: "redis", Params: urlParams, NativePrefix: true, Open: openURL, Place: place}

// PasswordEnv is the environment variable that supplies the password when
// the URL has none.
const PasswordEnv = "REDIS_PASSWORD"

// urlParams are the query parameters a URL may carry besides the shared
// ones: go-redis connection options, passed to it as they are.
var urlParams = []string{"client_name", "dial_timeout", "max_retries", "pool_size", "read_timeout", "write_timeout"}

// openURL is the storeurl opener for every scheme of this package. The
// store it returns owns its client: closing the store closes it. It does
// not dial: the first call does.
func openURL(ctx context.Context, loc *storeurl.Location) (blob.Store, error) {
	cfg, err := parseURL(loc, os.Getenv)
	if err != nil {
		return nil, err
	}
	client := cfg.newClient()
	// No call at open: like every other backend, a store whose server is
	// down at start answers each command with the error, and serves once
	// the server is back (issue 26 item 9).
	s, err := open(ctx, client, &Options{Prefix: cfg.prefix, Timeout: cfg.timeout}, true, cfg.password(), false)
	if err != nil {
		_ = client.Close() // the open error is the one worth reporting
		return nil, err
	}
	return s, nil
}

// place is the store's storeurl.Place: the server (host and port, the port
// 6379 when the URL gives none) and database, or the cluster's seed nodes,
// sorted, with the store's prefix, in Root, since each prefix is a namespace
// of its own (keys.go): "a" and "a/b" are two stores that share no key. TLS
// or not, and the user, pick no other data. A cluster named by other seed
// nodes is another place to it.
func place(loc *storeurl.Location) (storeurl.Place, error) {
	cfg, err := parseURL(loc, func(string) string { return "" })
	if err != nil {
		return storeurl.Place{}, err
	}
	prefix, err := checkPrefix(cfg.prefix)
	if err != nil {
		return storeurl.Place{}, err
	}
	var server string
	if cfg.cluster != nil {
		addrs := strings.Split(strings.ToLower(strings.Join(cfg.cluster.Addrs, ",")), ",")
		slices.Sort(addrs)
		server = "cluster " + strings.Join(addrs, ",")
	} else {
		server = cfg.single.Addr + "/" + strconv.Itoa(cfg.single.DB)
	}
	return storeurl.Place{Root: strings.ToLower(server) + " {" + prefix + "}"}, nil
}

// urlConfig is what a URL says: the store's prefix and the client options
// of either one server or a cluster.
type urlConfig struct {
	prefix  string
	timeout time.Duration           // of each call; 0: blob.DefaultTimeout
	single  *goredis.Options        // redis://, rediss://
	cluster *goredis.ClusterOptions // redis-cluster://, rediss-cluster://
}

func (c urlConfig) password() string {
	if c.cluster != nil {
		return c.cluster.Password
	}
	return c.single.Password
}

func (c urlConfig) newClient() goredis.UniversalClient {
	if c.cluster != nil {
		return goredis.NewClusterClient(c.cluster)
	}
	return goredis.NewClient(c.single)
}

// parseURL reads a store URL (see the package documentation), as
// storeurl parsed it. getenv supplies PasswordEnv. Its errors never contain
// the password.
func parseURL(loc *storeurl.Location, getenv func(string) string) (urlConfig, error) {
	u := loc.URL
	scheme := u.Scheme
	cluster := scheme == SchemeCluster || scheme == SchemeClusterTLS
	switch {
	case u.Opaque != "" || u.Host == "":
		// The opaque part may hold a password: do not repeat it.
		return urlConfig{}, fmt.Errorf("redis: %s URL names no server (want %s://HOST:PORT)", scheme, scheme)
	case cluster && strings.Trim(u.Path, "/") != "":
		return urlConfig{}, fmt.Errorf("redis: %s URL: unexpected path %q: a cluster has only database 0", scheme, u.Path)
	}
	if err := checkRanges(u.Path, loc.Params); err != nil {
		return urlConfig{}, err
	}
	query := maps.Clone(loc.Params) // go-redis' options, given once each
	cfg := urlConfig{prefix: loc.Prefix, timeout: loc.Timeout}

	var user, password string
	if u.User != nil {
		user = u.User.Username()
		password, _ = u.User.Password()
	}
	if password == "" {
		password = getenv(PasswordEnv)
	}

	// go-redis parses the rest: host, port, database, its own options. It
	// gets a copy without the user info, so that nothing it reports can
	// hold the password.
	plain := url.URL{Scheme: "redis", Host: u.Host, Path: u.Path}
	if scheme == SchemeTLS || scheme == SchemeClusterTLS {
		plain.Scheme = "rediss"
	}
	var err error
	if cluster {
		hosts := strings.Split(u.Host, ",")
		plain.Host = hosts[0]
		for _, h := range hosts[1:] {
			query.Add("addr", h)
		}
		plain.RawQuery = query.Encode()
		cfg.cluster, err = goredis.ParseClusterURL(plain.String())
		if err == nil {
			cfg.cluster.Username, cfg.cluster.Password = user, password
			cfg.cluster.ContextTimeoutEnabled = true
		}
	} else {
		plain.RawQuery = query.Encode()
		cfg.single, err = goredis.ParseURL(plain.String())
		if err == nil {
			cfg.single.Username, cfg.single.Password = user, password
			cfg.single.ContextTimeoutEnabled = true
		}
	}
	if err != nil {
		// go-redis' URL errors are plain text, without the password (it
		// never saw it), each starting with its own "redis: ".
		return urlConfig{}, fmt.Errorf("redis: %s URL: %s", scheme, strings.TrimPrefix(err.Error(), "redis: "))
	}
	return cfg, nil
}

// The ranges of the numeric URL parameters (docs/spec.md "Store URLs:
// ranges, start-up, errors"). go-redis takes any int: a negative pool_size
// panics in make, a huge one allocates its pool's queue up front.
const (
	minDuration = time.Millisecond
	maxDuration = time.Hour
	maxPoolSize = 1000
	maxRetries  = 100
	maxDB       = math.MaxInt32
)

// checkRanges refuses a database number (path) or a numeric parameter
// outside its range, with the text of docs/spec.md, before go-redis reads
// them.
func checkRanges(path string, params url.Values) error {
	if db := strings.TrimPrefix(path, "/"); db != "" && !strings.Contains(db, "/") {
		if n, err := strconv.ParseInt(db, 10, 64); err != nil || n < 0 || n > maxDB {
			return fmt.Errorf("redis: database /%s: want a whole number from 0 to %d", db, maxDB)
		}
	}
	for _, name := range []string{"dial_timeout", "read_timeout", "write_timeout"} {
		if v, ok := params[name]; ok {
			if d, ok := parseDuration(v[0]); !ok || d < minDuration || d > maxDuration {
				return fmt.Errorf("redis: %s=%q: want a duration from 1ms to 1h, such as 2s or 500ms (a bare number is seconds)", name, v[0])
			}
		}
	}
	if v, ok := params["pool_size"]; ok {
		if n, err := strconv.Atoi(v[0]); err != nil || n < 1 || n > maxPoolSize {
			return fmt.Errorf("redis: pool_size=%q: want a whole number from 1 to %d", v[0], maxPoolSize)
		}
	}
	if v, ok := params["max_retries"]; ok {
		if n, err := strconv.Atoi(v[0]); err != nil || n < -1 || n > maxRetries {
			return fmt.Errorf("redis: max_retries=%q: want a whole number from -1 (no retries) to %d", v[0], maxRetries)
		}
	}
	return nil
}

// parseDuration reads a duration as go-redis does: a whole number of
// seconds, or Go duration syntax.
func parseDuration(v string) (time.Duration, bool) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 || n > int64(maxDuration/time.Second) {
			return 0, false
		}
		return time.Duration(n) * time.Second, true
	}
	d, err := time.ParseDuration(v)
	return d, err == nil
}
