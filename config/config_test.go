package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

const sample = `# the stores of this machine
default: work
stores:
  work: s3://bucket/memories?region=eu-west-1&secret_key=${SECRET}
  local: ./memories
  team:
    mounts:
      notes: redis://${REDIS_HOST}:6379/0
      docs: gs://docs/memories:ro
    mcp:
      http: 127.0.0.1:8080
      token_file: /etc/cloudmem/tokens.json
      max_request_bytes: 1048576
    web:
      listen: 127.0.0.1:8081
  price: "file:///srv/m?note=$$5"
`

func TestParse(t *testing.T) {
	c, err := Parse("c.yaml", []byte(sample), env(map[string]string{"SECRET": "s3cr3t", "REDIS_HOST": "10.0.0.2"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Default != "work" || c.Path != "c.yaml" {
		t.Errorf("Default, Path = %q, %q", c.Default, c.Path)
	}
	if got, want := c.Names(), []string{"work", "local", "team", "price"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Names() = %q, want %q", got, want)
	}
	// As written: variables unexpanded.
	if got, want := c.Stores[0].URL, "s3://bucket/memories?region=eu-west-1&secret_key=${SECRET}"; got != want {
		t.Errorf("Stores[0].URL = %q, want %q", got, want)
	}
	work, err := c.Store("work")
	if err != nil {
		t.Fatal(err)
	}
	want := Store{Name: "work", URL: "s3://bucket/memories?region=eu-west-1&secret_key=s3cr3t", Line: 4}
	if !reflect.DeepEqual(work, want) {
		t.Errorf("Store(work) = %+v, want %+v", work, want)
	}
	team, err := c.Store("team")
	if err != nil {
		t.Fatal(err)
	}
	want = Store{
		Name: "team",
		Mounts: []Mount{
			{Name: "notes", URL: "redis://10.0.0.2:6379/0"},
			{Name: "docs", URL: "gs://docs/memories", ReadOnly: true},
		},
		MCP:  MCP{HTTP: "127.0.0.1:8080", TokenFile: "/etc/cloudmem/tokens.json", MaxRequestBytes: 1 << 20},
		Web:  Web{Listen: "127.0.0.1:8081"},
		Line: 6,
	}
	if !reflect.DeepEqual(team, want) {
		t.Errorf("Store(team) = %+v, want %+v", team, want)
	}
	price, err := c.Store("price")
	if err != nil || price.URL != "file:///srv/m?note=$5" {
		t.Errorf("Store(price) = %+v, %v; want the URL with one $", price, err)
	}
}

// TestUnsetVariable: only the store used needs its variables, and a missing
// one is an error with the line.
func TestUnsetVariable(t *testing.T) {
	c, err := Parse("c.yaml", []byte(sample), env(map[string]string{"SECRET": "x"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Store("work"); err != nil {
		t.Errorf("Store(work) = %v; its variable is set", err)
	}
	_, err = c.Store("team")
	if got, want := errText(err), "c.yaml:8: ${REDIS_HOST} is not set (a variable the file names must be set and not empty)"; got != want {
		t.Errorf("Store(team) error\n got %s\nwant %s", got, want)
	}
}

func TestUnknownStore(t *testing.T) {
	c, err := Parse("/home/me/.config/cloudmem/config.yaml", []byte(sample), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Store("wrok")
	if !errors.Is(err, ErrUnknownStore) {
		t.Errorf("Store(wrok) = %v, want ErrUnknownStore", err)
	}
	want := `no store named "wrok" in /home/me/.config/cloudmem/config.yaml (stores: work, local, team, price); a local directory is written ./wrok`
	if got := errText(err); got != want {
		t.Errorf("error\n got %s\nwant %s", got, want)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, file, want string }{
		{"bad YAML", "stores:\n  a: b\n c: d\n", "c.yaml:2: did not find expected key"},
		{"tab", "stores:\n\ta: b\n", "c.yaml:2: found character that cannot start any token"},
		{"unknown top key", "default: a\nstore:\n  a: ./m\n", `c.yaml:2: unknown key "store" (want default, stores)`},
		{"unknown store key", "stores:\n  a:\n    uri: ./m\n", `c.yaml:3: unknown key "uri" in store "a" (want url, mounts, mcp, web)`},
		{"unknown mcp key", "stores:\n  a:\n    url: ./m\n    mcp:\n      port: 8\n",
			`c.yaml:5: unknown key "port" in the mcp settings of store "a" (want http, token_file, tls_cert, tls_key, max_request_bytes)`},
		{"unknown web key", "stores:\n  a:\n    url: ./m\n    web:\n      addr: x\n",
			`c.yaml:5: unknown key "addr" in the web settings of store "a" (want listen)`},
		{"bad name", "stores:\n  a/b: ./m\n", `c.yaml:2: store name "a/b": want letters, digits, '.', '_' or '-', starting with a letter or digit`},
		{"name with colon", "stores:\n  s3:x: ./m\n", `c.yaml:2: store name "s3:x": want letters, digits, '.', '_' or '-', starting with a letter or digit`},
		{"both", "stores:\n  a:\n    url: ./m\n    mounts:\n      x: ./n\n", `c.yaml:2: store "a": give url or mounts, not both`},
		{"neither", "stores:\n  a:\n    mcp:\n      http: :1\n", `c.yaml:2: store "a": give url or mounts`},
		{"empty url", "stores:\n  a: \"\"\n", `c.yaml:2: store "a": give url or mounts`},
		{"null url", "stores:\n  a:\n", `c.yaml:2: store "a" must be a string`},
		{"list store", "stores:\n  a: [x]\n", `c.yaml:2: store "a" must be a string (a URL) or a mapping`},
		{"bad mount", "stores:\n  a:\n    mounts:\n      .hid: ./m\n", `c.yaml:4: store "a": mount ".hid": mount name ".hid" starts with '.', which listings hide`},
		{"mount list", "stores:\n  a:\n    mounts: [./m]\n", `c.yaml:3: the mounts of store "a" must be a mapping (NAME: URL)`},
		{"mount ro only", "stores:\n  a:\n    mounts:\n      x: \":ro\"\n", `c.yaml:4: store "a": mount "x" has no URL`},
		{"twice", "stores:\n  a: ./m\n  a: ./n\n", `c.yaml:3: store "a" is named twice`},
		{"default twice", "default: a\ndefault: a\nstores:\n  a: ./m\n", `c.yaml:2: key "default" is given twice`},
		{"stores twice", "stores:\n  a: ./m\nstores:\n  b: ./n\n", `c.yaml:3: key "stores" is given twice`},
		{"url twice", "stores:\n  a:\n    url: ./m\n    url: ./n\n", `c.yaml:4: key "url" is given twice`},
		{"mcp key twice", "stores:\n  a:\n    url: ./m\n    mcp:\n      http: :1\n      http: :2\n", `c.yaml:6: key "http" is given twice`},
		{"default unknown", "default: b\nstores:\n  a: ./m\n", `c.yaml:1: default "b" is not a store of this file (stores: a)`},
		{"bad number", "stores:\n  a:\n    url: ./m\n    mcp:\n      max_request_bytes: -1\n", `c.yaml:5: max_request_bytes of store "a" must be a number of 1 or more`},
		{"unclosed var", "stores:\n  a: redis://:hunter2@h/0?x=${X\n", `c.yaml:2: a ${ without its }`},
		{"name as URL", "stores:\n  a: memories\n", `c.yaml:2: store "a": "memories" is a name, not a URL; a local directory is written ./memories`},
		{"name as mount URL", "stores:\n  a:\n    mounts:\n      x: m:ro\n", `c.yaml:4: store "a", mount "x": "m" is a name, not a URL; a local directory is written ./m`},
		{"not a mapping", "- a\n", "c.yaml:1: the file must be a mapping (default, stores)"},
		{"stores list", "stores: [a]\n", "c.yaml:1: stores must be a mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.yaml", []byte(tc.file), env(nil))
			if got := errText(err); got != tc.want {
				t.Errorf("Parse error\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestEmptyFile(t *testing.T) {
	c, err := Parse("c.yaml", []byte("# nothing yet\n"), env(nil))
	if err != nil || len(c.Stores) != 0 || c.Default != "" {
		t.Errorf("Parse(comment) = %+v, %v; want an empty config", c, err)
	}
}

func TestIsName(t *testing.T) {
	for v, want := range map[string]bool{
		"work": true, "my-store.2": true, "memories": true,
		"": false, "./memories": false, "/srv/m": false, "s3://b": false, "file:m": false, "C:m": false,
	} {
		if got := IsName(v); got != want {
			t.Errorf("IsName(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestDefaultPath(t *testing.T) {
	for _, tc := range []struct {
		env      map[string]string
		want     string
		explicit bool
	}{
		{map[string]string{"CLOUDMEM_CONFIG": "/x/c.yaml", "XDG_CONFIG_HOME": "/xdg"}, "/x/c.yaml", true},
		{map[string]string{"XDG_CONFIG_HOME": "/xdg", "HOME": "/h"}, filepath.Join("/xdg", "cloudmem", "config.yaml"), false},
		{map[string]string{"HOME": "/h"}, filepath.Join("/h", ".config", "cloudmem", "config.yaml"), false},
		{nil, "", false},
	} {
		got, explicit := DefaultPath(env(tc.env))
		if got != tc.want || explicit != tc.explicit {
			t.Errorf("DefaultPath(%v) = %q, %v; want %q, %v", tc.env, got, explicit, tc.want, tc.explicit)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	// No file at the default path: ErrNoConfig.
	_, err := Load(env(map[string]string{"XDG_CONFIG_HOME": dir}))
	if !errors.Is(err, ErrNoConfig) {
		t.Errorf("Load(no file) = %v, want ErrNoConfig", err)
	}
	if got, want := errText(err), "config: there is no config file ("+filepath.Join(dir, "cloudmem", "config.yaml")+")"; got != want {
		t.Errorf("error\n got %s\nwant %s", got, want)
	}
	// A missing $CLOUDMEM_CONFIG is another error.
	missing := filepath.Join(dir, "nope.yaml")
	_, err = Load(env(map[string]string{"CLOUDMEM_CONFIG": missing}))
	if errors.Is(err, ErrNoConfig) || errText(err) != "the config file "+missing+" ($CLOUDMEM_CONFIG) does not exist" {
		t.Errorf("Load(missing $CLOUDMEM_CONFIG) = %v", err)
	}

	// The identity warning: only for a file others can read that names one.
	path := filepath.Join(dir, "c.yaml")
	secret := "stores:\n  a: file:///m?encrypt=age&age_identity_file=/k.txt\n"
	for _, tc := range []struct {
		content string
		mode    os.FileMode
		want    []string
	}{
		{secret, 0o644, []string{path + " names an identity file and other users can read it; run chmod 600 " + path}},
		{secret, 0o600, nil},
		{"stores:\n  a: ./m\n", 0o644, nil},
	} {
		if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, tc.mode); err != nil {
			t.Fatal(err)
		}
		c, err := Load(env(map[string]string{"CLOUDMEM_CONFIG": path}))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(c.Warnings, tc.want) {
			t.Errorf("mode %o %q: Warnings = %q, want %q", tc.mode, tc.content, c.Warnings, tc.want)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestVariableShape: a variable's value fills a part of a URL and cannot
// reshape it (a new parameter, another host or port, a user); the error
// names the variable, never its value. A variable that is the whole URL, a
// password with ':' and a path with '/' are fine.
func TestVariableShape(t *testing.T) {
	const reshaped = "c.yaml:%d: ${%s} holds a character that would change the URL around it (?, #, & or @; / in the host; : in the user); " +
		"percent-encode it in the variable, or put the whole URL in one variable"
	vars := env(map[string]string{"TEAM": "alice&history=on", "EVIL": "x&endpoint=http://evil", "HOST": "h/evil",
		"PASS": "p:w", "DIR": "a/b", "WHOLE": "s3://b/p?region=eu&x=1", "AT": "u@v", "FRAG": "a#b",
		"HOSTPORT": "h:99", "V6": "[::1]", "USER": "a:b", "SCHEME": "s3://attacker"})
	file := `stores:
  query: file:///m?prefix=${TEAM}
  region: s3://b/p?region=${EVIL}
  host: redis://${HOST}/0
  user: redis://${AT}:pw@h/0
  frag: file:///m/${FRAG}
  pass: redis://u:${PASS}@h/0
  dir: s3://b/${DIR}?region=eu
  whole: ${WHOLE}
  hostport: redis://${HOSTPORT}/0
  v6: redis://${V6}:6379/0
  userpart: redis://${USER}:pw@h/0
  scheme: ${SCHEME}/p
  queryat: redis://${HOSTPORT}/0?x=a@b
`
	c, err := Parse("c.yaml", []byte(file), vars)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, want string }{
		{"query", fmt.Sprintf(reshaped, 2, "TEAM")},
		{"region", fmt.Sprintf(reshaped, 3, "EVIL")},
		{"host", fmt.Sprintf(reshaped, 4, "HOST")},
		{"user", fmt.Sprintf(reshaped, 5, "AT")},
		{"frag", fmt.Sprintf(reshaped, 6, "FRAG")},
		{"pass", "redis://u:p:w@h/0"},
		{"dir", "s3://b/a/b?region=eu"},
		{"whole", "s3://b/p?region=eu&x=1"},
		{"hostport", "redis://h:99/0"},
		{"v6", "redis://[::1]:6379/0"},
		{"userpart", fmt.Sprintf(reshaped, 12, "USER")},
		{"scheme", fmt.Sprintf(reshaped, 13, "SCHEME")},
		{"queryat", "redis://h:99/0?x=a@b"},
	} {
		st, err := c.Store(tc.name)
		got := st.URL
		if err != nil {
			got = errText(err)
		}
		if got != tc.want {
			t.Errorf("Store(%q):\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}
