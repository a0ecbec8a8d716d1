package redis

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

func init() {
	for _, scheme := range []string{Scheme, SchemeTLS, SchemeCluster, SchemeClusterTLS} {
		storeurl.Register(scheme, storeurl.Backend{Open: openURL, NativePrefix: true})
	}
}

// PasswordEnv is the environment variable that supplies the password when
// the URL has none.
const PasswordEnv = "REDIS_PASSWORD"

// urlParams are the query parameters a URL may carry besides the shared
// ones: go-redis connection options, passed to it as they are.
var urlParams = []string{"client_name", "dial_timeout", "max_retries", "pool_size", "read_timeout", "write_timeout"}

// openURL is the storeurl opener for every scheme of this package. The
// store it returns owns its client: closing the store closes it.
func openURL(ctx context.Context, u *url.URL) (blob.Store, error) {
	cfg, err := parseURL(u, os.Getenv)
	if err != nil {
		return nil, err
	}
	client := cfg.newClient()
	s, err := open(ctx, client, &Options{Prefix: cfg.prefix, Timeout: cfg.timeout}, true, cfg.password())
	if err != nil {
		_ = client.Close() // the open error is the one worth reporting
		return nil, err
	}
	return s, nil
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

// parseURL reads a store URL (see the package documentation). getenv
// supplies PasswordEnv. Its errors never contain the password.
func parseURL(u *url.URL, getenv func(string) string) (urlConfig, error) {
	scheme := strings.ToLower(u.Scheme)
	cluster := scheme == SchemeCluster || scheme == SchemeClusterTLS
	if err := storeurl.CheckParams(u, urlParams...); err != nil {
		return urlConfig{}, err
	}
	switch {
	case u.Opaque != "" || u.Host == "":
		// The opaque part may hold a password: do not repeat it.
		return urlConfig{}, fmt.Errorf("redis: %s URL names no server (want %s://HOST:PORT)", scheme, scheme)
	case cluster && strings.Trim(u.Path, "/") != "":
		return urlConfig{}, fmt.Errorf("redis: %s URL: unexpected path %q: a cluster has only database 0", scheme, u.Path)
	}
	query := u.Query()
	cfg := urlConfig{prefix: query.Get("prefix"), timeout: storeurl.Timeout(u)}
	query.Del("prefix")
	query.Del("timeout") // storeurl's, applied by the store; go-redis has no such option

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
