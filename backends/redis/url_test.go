package redis

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseURL(t *testing.T) {
	env := map[string]string{}
	getenv := func(name string) string { return env[name] }
	for _, tc := range []struct {
		url, envPassword string
		// want, as one line: prefix, addresses, db, user, password, tls
		want string
	}{
		{url: "redis://127.0.0.1:6379", want: "prefix= addrs=[127.0.0.1:6379] db=0 user= password= tls=false"},
		{url: "redis://127.0.0.1:6379/0?prefix=agent1", want: "prefix=agent1 addrs=[127.0.0.1:6379] db=0 user= password= tls=false"},
		{url: "redis://h:7000/3?prefix=agents/7", want: "prefix=agents/7 addrs=[h:7000] db=3 user= password= tls=false"},
		{url: "redis://:s3cret@h:1", want: "prefix= addrs=[h:1] db=0 user= password=s3cret tls=false"},
		{url: "redis://bob:p%40ss@h:1/2", want: "prefix= addrs=[h:1] db=2 user=bob password=p@ss tls=false"},
		{url: "redis://bob@h:1", envPassword: "fromenv", want: "prefix= addrs=[h:1] db=0 user=bob password=fromenv tls=false"},
		{url: "redis://:inurl@h:1", envPassword: "fromenv", want: "prefix= addrs=[h:1] db=0 user= password=inurl tls=false"},
		{url: "rediss://h:6380/1", want: "prefix= addrs=[h:6380] db=1 user= password= tls=true"},
		{url: "redis://h", want: "prefix= addrs=[h:6379] db=0 user= password= tls=false"},
		{url: "redis-cluster://a:7000,b:7001,c:7002?prefix=p", want: "prefix=p addrs=[a:7000 b:7001 c:7002] db=0 user= password= tls=false"},
		{url: "redis-cluster://u:pw@a:7000/", want: "prefix= addrs=[a:7000] db=0 user=u password=pw tls=false"},
		{url: "rediss-cluster://a:7000,b:7001", envPassword: "e", want: "prefix= addrs=[a:7000 b:7001] db=0 user= password=e tls=true"},
	} {
		env[PasswordEnv] = tc.envPassword
		cfg, err := parse(t, tc.url, getenv)
		if err != nil {
			t.Errorf("parseURL(%s): %v", tc.url, err)
			continue
		}
		if got := describe(cfg); got != tc.want {
			t.Errorf("parseURL(%s) =\n\t%s\nwant\n\t%s", tc.url, got, tc.want)
		}
	}
}

func describe(c urlConfig) string {
	var addrs []string
	var db int
	var user, password string
	var tls, ctxTimeouts bool
	if c.cluster != nil {
		addrs, user, password = c.cluster.Addrs, c.cluster.Username, c.cluster.Password
		tls, ctxTimeouts = c.cluster.TLSConfig != nil, c.cluster.ContextTimeoutEnabled
	} else {
		addrs, db, user, password = []string{c.single.Addr}, c.single.DB, c.single.Username, c.single.Password
		tls, ctxTimeouts = c.single.TLSConfig != nil, c.single.ContextTimeoutEnabled
	}
	if !ctxTimeouts {
		return "ContextTimeoutEnabled is false"
	}
	return "prefix=" + c.prefix + " addrs=[" + strings.Join(addrs, " ") + "] db=" + strconv.Itoa(db) +
		" user=" + user + " password=" + password + " tls=" + map[bool]string{true: "true", false: "false"}[tls]
}

func TestParseURLOptions(t *testing.T) {
	u := "redis://h:1?client_name=agent&dial_timeout=2&read_timeout=1500ms&write_timeout=3s&pool_size=4&max_retries=-1"
	cfg, err := parse(t, u, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.single
	got := []any{o.ClientName, o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolSize, o.MaxRetries}
	want := []any{"agent", 2 * time.Second, 1500 * time.Millisecond, 3 * time.Second, 4, -1}
	if !slices.Equal(got, want) {
		t.Errorf("options = %v, want %v", got, want)
	}
	cfg, err = parse(t, "redis-cluster://a:1,b:2?pool_size=9&read_timeout=2s", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.cluster.PoolSize != 9 || cfg.cluster.ReadTimeout != 2*time.Second {
		t.Errorf("cluster options: PoolSize %d, ReadTimeout %v; want 9, 2s", cfg.cluster.PoolSize, cfg.cluster.ReadTimeout)
	}
}

func TestParseURLErrors(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"redis://:s3cret@h:1?colour=red",
			`storeurl: redis: unknown URL parameter "colour" (redis accepts: client_name, dial_timeout, max_retries, pool_size, read_timeout, write_timeout; every scheme accepts: max_file_bytes, max_files, policy, prefix, readonly, secrets, timeout, view_limit)`},
		{"redis://:s3cret@h:1?db=2", `storeurl: redis: unknown URL parameter "db" (redis accepts: client_name, dial_timeout, max_retries, pool_size, read_timeout, write_timeout; every scheme accepts: max_file_bytes, max_files, policy, prefix, readonly, secrets, timeout, view_limit)`},
		{"redis://:s3cret@h:1/x", `redis: database /x: want a whole number from 0 to 2147483647`},
		{"redis://:s3cret@h:1/-1", `redis: database /-1: want a whole number from 0 to 2147483647`},
		{"redis://:s3cret@h:1/2147483648", `redis: database /2147483648: want a whole number from 0 to 2147483647`},
		{"redis://:s3cret@h:1?pool_size=-5", `redis: pool_size="-5": want a whole number from 1 to 1000`},
		{"redis://:s3cret@h:1?pool_size=0", `redis: pool_size="0": want a whole number from 1 to 1000`},
		{"redis://:s3cret@h:1?pool_size=1000000000", `redis: pool_size="1000000000": want a whole number from 1 to 1000`},
		{"redis-cluster://:s3cret@a:1,b:2?pool_size=-5", `redis: pool_size="-5": want a whole number from 1 to 1000`},
		{"redis://:s3cret@h:1?max_retries=-2", `redis: max_retries="-2": want a whole number from -1 (no retries) to 100`},
		{"redis://:s3cret@h:1?max_retries=101", `redis: max_retries="101": want a whole number from -1 (no retries) to 100`},
		{"redis://:s3cret@h:1?read_timeout=-1", `redis: read_timeout="-1": want a duration from 1ms to 1h, such as 2s or 500ms (a bare number is seconds)`},
		{"redis://:s3cret@h:1?write_timeout=0", `redis: write_timeout="0": want a duration from 1ms to 1h, such as 2s or 500ms (a bare number is seconds)`},
		{"redis://:s3cret@h:1?dial_timeout=3601", `redis: dial_timeout="3601": want a duration from 1ms to 1h, such as 2s or 500ms (a bare number is seconds)`},
		{"redis://:s3cret@h:1?dial_timeout=9223372036854775807", `redis: dial_timeout="9223372036854775807": want a duration from 1ms to 1h, such as 2s or 500ms (a bare number is seconds)`},
		{"redis://:s3cret@h:1/1/2", `redis: redis URL: invalid URL path: /1/2`},
		{"redis://:s3cret@h:1?pool_size=+2", `redis: pool_size=" 2": want a whole number from 1 to 1000`}, // + decodes as a space
		{"redis://:s3cret@h:1?pool_size=many", `redis: pool_size="many": want a whole number from 1 to 1000`},
		{"rediss://:s3cret@h:1?dial_timeout=soon", `redis: dial_timeout="soon": want a duration from 1ms to 1h, such as 2s or 500ms (a bare number is seconds)`},
		{"redis:s3cret@h:1", `redis: redis URL names no server (want redis://HOST:PORT)`},
		{"redis:///0", `redis: redis URL names no server (want redis://HOST:PORT)`},
		{"redis-cluster://:s3cret@a:1,b:2/3", `redis: redis-cluster URL: unexpected path "/3": a cluster has only database 0`},
		{"redis-cluster://:s3cret@a:1,:2", `redis: redis-cluster URL: unable to parse addr param: :2`},
	} {
		_, err := parse(t, tc.url, func(string) string { return "" })
		if err == nil {
			t.Errorf("parseURL(%s) succeeded", tc.url)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("parseURL(%s) error =\n\t%s\nwant\n\t%s", tc.url, err, tc.want)
		}
	}
}

// parse parses raw as storeurl.Open does before it calls openURL.
func parse(t *testing.T, raw string, getenv func(string) string) (urlConfig, error) {
	t.Helper()
	loc, err := backend.Parse(mustURL(t, raw))
	if err != nil {
		return urlConfig{}, err
	}
	return parseURL(loc, getenv)
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
