package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/config"
	"github.com/cloudmem/cloudmem/mcpserver"
)

// writeConfig writes content to a config file in a temporary directory,
// mode 0600, and returns its path.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStoreByName: --store NAME, $CLOUDMEM_STORE=NAME and the config's
// default open the store of that name; a mount table by name too.
func TestStoreByName(t *testing.T) {
	name := storeName(t)
	seed(t, name+"-work", map[string]string{"w.md": "work\n"})
	seed(t, name+"-other", map[string]string{"o.md": "other\n"})
	other := sharedStore(name + "-other")
	path := writeConfig(t, "default: work\nstores:\n"+
		"  work: shared://"+name+"-work\n"+
		"  other: shared://${OTHER}\n"+
		"  both:\n    mounts:\n      w: shared://"+name+"-work\n      o: shared://"+name+"-other:ro\n")
	env := map[string]string{"CLOUDMEM_CONFIG": path, "OTHER": name + "-other"}
	with := func(k, v string) map[string]string {
		m := map[string]string{k: v}
		for k, v := range env {
			m[k] = v
		}
		return m
	}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"default", []string{"ls"}, env, "5  /memories/w.md\n"},
		{"--store", []string{"ls", "--store", "other"}, env, "6  /memories/o.md\n"},
		{"$CLOUDMEM_STORE", []string{"ls"}, with("CLOUDMEM_STORE", "other"), "6  /memories/o.md\n"},
		{"--store over env", []string{"ls", "--store", "work"}, with("CLOUDMEM_STORE", "other"), "5  /memories/w.md\n"},
		{"mounts", []string{"ls", "--store", "both"}, env, "6  /memories/o/o.md\n5  /memories/w/w.md\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := cloudmem(tc.args, "", tc.env)
			if code != 0 || out != tc.want || errOut != "" {
				t.Errorf("cloudmem %q = %d, %q, %q; want 0, %q, \"\"", tc.args, code, out, errOut, tc.want)
			}
		})
	}
	// The mount table's :ro holds.
	code, _, errOut := cloudmem([]string{"put", "/memories/o/x.md", "--store", "both"}, "x", env)
	if code != 1 || errOut != readOnlyMountErr {
		t.Errorf("put into a read-only mount = %d, %q; want 1, %q", code, errOut, readOnlyMountErr)
	}
	if _, err := other.Stat(t.Context(), "x.md"); err == nil {
		t.Error("the read-only mount was written")
	}
}

// TestStoreByNameErrors: an unknown name, no config file, a broken file.
func TestStoreByNameErrors(t *testing.T) {
	dir := t.TempDir()
	path := writeConfig(t, "stores:\n  work: ./m\n  team: ./t\n")
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"unknown", []string{"ls", "--store", "wrok"}, map[string]string{"CLOUDMEM_CONFIG": path},
			`cloudmem ls: no store named "wrok" in ` + path + " (stores: work, team); a local directory is written ./wrok\n"},
		{"unknown from env", []string{"ls"}, map[string]string{"CLOUDMEM_CONFIG": path, "CLOUDMEM_STORE": "memories"},
			`cloudmem ls: no store named "memories" in ` + path + " (stores: work, team); a local directory is written ./memories\n"},
		{"no config", []string{"ls", "--store", "work"}, map[string]string{"XDG_CONFIG_HOME": dir},
			`cloudmem ls: no store named "work": there is no config file (` + filepath.Join(dir, "cloudmem", "config.yaml") + "); a local directory is written ./work\n"},
		{"missing $CLOUDMEM_CONFIG", []string{"ls"}, map[string]string{"CLOUDMEM_CONFIG": dir + "/none.yaml"},
			"cloudmem ls: the config file " + dir + "/none.yaml ($CLOUDMEM_CONFIG) does not exist\n"},
		{"copy DST", []string{"copy", "shared://x", "nope"}, map[string]string{"CLOUDMEM_CONFIG": path},
			`cloudmem copy: DST: no store named "nope" in ` + path + " (stores: work, team); a local directory is written ./nope\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := cloudmem(tc.args, "", tc.env)
			if code != 1 || out != "" || errOut != tc.want {
				t.Errorf("cloudmem %q = %d, %q,\n%q; want 1, \"\",\n%q", tc.args, code, out, errOut, tc.want)
			}
		})
	}
	// A broken file stops a command that needs the default, not one that
	// names a URL, nor keygen.
	bad := writeConfig(t, "stores:\n  work: ./m\n\n  x:\n    uri: y\n")
	env := map[string]string{"CLOUDMEM_CONFIG": bad}
	code, _, errOut := cloudmem([]string{"ls"}, "", env)
	if want := "cloudmem ls: " + bad + `:5: unknown key "uri" in store "x" (want url, mounts, mcp, web)` + "\n"; code != 1 || errOut != want {
		t.Errorf("ls with a broken config = %d, %q; want 1, %q", code, errOut, want)
	}
	code, _, errOut = cloudmem([]string{"ls", "--store", "shared://" + storeName(t)}, "", env)
	if code != 0 || errOut != "" {
		t.Errorf("ls --store URL with a broken config = %d, %q; want 0", code, errOut)
	}
	code, _, errOut = cloudmem([]string{"keygen", "-o", filepath.Join(dir, "k.txt")}, "", env)
	if code != 0 || errOut != "" {
		t.Errorf("keygen with a broken config = %d, %q; want 0", code, errOut)
	}
	// copy names its two stores: URLs need no config file.
	src := seed(t, storeName(t)+"-src", map[string]string{"a.md": "a"})
	code, out, errOut := cloudmem([]string{"copy", src, "shared://" + storeName(t) + "-dst"}, "", env)
	if want := "copied 1 file, skipped 0 that DST already held\nverified 1 file: every SHA-256 is equal\n"; code != 0 || errOut != "" || out != want {
		t.Errorf("copy URL URL with a broken config = %d, %q, %q; want 0, %q", code, out, errOut, want)
	}
}

// TestConfigIdentityWarning: a config file other users can read that names
// an identity file gets a warning; the command goes on.
func TestConfigIdentityWarning(t *testing.T) {
	path := writeConfig(t, "stores:\n  s: shared://"+storeName(t)+"?age_identity_file=/k\n")
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cloudmem([]string{"config", "ls"}, "", map[string]string{"CLOUDMEM_CONFIG": path})
	want := "cloudmem: warning: " + path + " names an identity file and other users can read it; run chmod 600 " + path + "\n"
	if code != 0 || errOut != want || out != "  NAME  STORE\n  s     shared://"+storeName(t)+"?age_identity_file=/k\n" {
		t.Errorf("config ls = %d, %q, %q; want the warning %q", code, out, errOut, want)
	}
}

func TestConfigLsGetPath(t *testing.T) {
	path := writeConfig(t, `default: prod
stores:
  local: ./memories
  prod: s3://bucket/m?region=eu&secret_key=${SECRET}&sig=abc&age_identity_file=/home/k.txt
  cache: redis://user:hunter2@10.0.0.1:6379/0
  tok: https://tok3n@host/x
  team:
    mounts:
      notes: redis://:pw@r:6379/1
      docs: gs://docs/m:ro
`)
	env := map[string]string{"CLOUDMEM_CONFIG": path}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"config", "ls"}, `  NAME   STORE
  local  ./memories
* prod   s3://bucket/m?region=eu&secret_key=***&sig=***&age_identity_file=/home/k.txt
  cache  redis://user:***@10.0.0.1:6379/0
  tok    https://***@host/x
  team   mounts: notes=redis://:***@r:6379/1 docs=gs://docs/m:ro
`},
		{[]string{"config", "get"}, "s3://bucket/m?region=eu&secret_key=***&sig=***&age_identity_file=/home/k.txt\n"},
		{[]string{"config", "get", "team"}, "mounts: notes=redis://:***@r:6379/1 docs=gs://docs/m:ro\n"},
		{[]string{"config", "path"}, path + "\n"},
	} {
		code, out, errOut := cloudmem(tc.args, "", env)
		if code != 0 || out != tc.want || errOut != "" {
			t.Errorf("cloudmem %q = %d, %q\n%s; want 0, \"\"\n%s", tc.args, code, errOut, out, tc.want)
		}
	}
	code, _, errOut := cloudmem([]string{"config", "get", "nope"}, "", env)
	if want := `cloudmem config get: no store named "nope" in ` + path + " (stores: local, prod, cache, tok, team); a local directory is written ./nope\n"; code != 1 || errOut != want {
		t.Errorf("config get nope = %d, %q; want 1, %q", code, errOut, want)
	}
	noDefault := writeConfig(t, "stores:\n  a: ./m\n")
	code, _, errOut = cloudmem([]string{"config", "get"}, "", map[string]string{"CLOUDMEM_CONFIG": noDefault})
	if want := "cloudmem config get: the config file " + noDefault + " has no default; name a store\n"; code != 1 || errOut != want {
		t.Errorf("config get (no default) = %d, %q; want 1, %q", code, errOut, want)
	}
	dir := t.TempDir()
	code, _, errOut = cloudmem([]string{"config", "ls"}, "", map[string]string{"HOME": dir})
	if want := "cloudmem config ls: there is no config file (" + filepath.Join(dir, ".config", "cloudmem", "config.yaml") + "); see 'cloudmem help config'\n"; code != 1 || errOut != want {
		t.Errorf("config ls (no file) = %d, %q; want 1, %q", code, errOut, want)
	}
}

// signatureLine is the description of failing://'s error.
const signatureLine = "SignatureDoesNotMatch: The request signature we calculated does not match the signature you provided. (check AWS_SECRET_ACCESS_KEY)\n"

// readOnlyMountErr is put's error for a file in a read-only mount.
const readOnlyMountErr = "cloudmem put: The memory directory is read-only: create is not allowed\n"

// TestConfigCheck: every store opened and called; a failure is one line
// with its cause, and the exit status is 1.
func TestConfigCheck(t *testing.T) {
	needSchemes(t, "s3")
	name := storeName(t)
	dir := t.TempDir()
	path := writeConfig(t, "stores:\n"+
		"  good: shared://"+name+"\n"+
		"  dir: file://"+filepath.ToSlash(dir)+"\n"+
		"  broken: failing://x\n"+
		"  missing: "+filepath.Join(dir, "none")+"\n"+
		"  unset: shared://${NOT_SET}\n"+
		"  team:\n    mounts:\n      a: shared://"+name+"\n      b: failing://y\n"+
		"  nested:\n    mounts:\n      a: "+filepath.ToSlash(dir)+"\n      b: file://"+filepath.ToSlash(dir)+"/b:ro\n")
	code, out, errOut := cloudmem([]string{"config", "check"}, "", map[string]string{"CLOUDMEM_CONFIG": path})
	wantOut := "ok    good\n" +
		"ok    dir\n" +
		"FAIL  broken: " + strings.TrimSuffix(signatureLine, "\n") + "\n" +
		"FAIL  missing: the store does not exist: no directory " + filepath.Join(dir, "none") + " (the first write creates it)\n" +
		"FAIL  unset: " + path + ":6: ${NOT_SET} is not set (a variable the file names must be set and not empty)\n" +
		"FAIL  team: mount b: " + strings.TrimSuffix(signatureLine, "\n") + "\n" +
		`FAIL  nested: mount "b" lies inside mount "a": a write through one would change the files of the other; give each a directory or prefix of its own` + "\n"
	wantErr := "cloudmem config check: 5 of 7 stores failed\n"
	if code != 1 || out != wantOut || errOut != wantErr {
		t.Errorf("config check = %d\n%s%q\nwant 1\n%s%q", code, out, errOut, wantOut, wantErr)
	}
	code, out, errOut = cloudmem([]string{"config", "check"}, "", map[string]string{"CLOUDMEM_CONFIG": writeConfig(t, "stores:\n  good: shared://"+name+"\n")})
	if code != 0 || out != "ok    good\n" || errOut != "" {
		t.Errorf("config check (all good) = %d, %q, %q", code, out, errOut)
	}
}

func TestMaskURL(t *testing.T) {
	for raw, want := range map[string]string{
		"./memories":                              "./memories",
		"file:///srv/m?encrypt=age":               "file:///srv/m?encrypt=age",
		"redis://:pw@h:6379/0":                    "redis://:***@h:6379/0",
		"s3://b/p?access_key_id=AK&token=t&x=1":   "s3://b/p?access_key_id=***&token=***&x=1",
		"azblob://c?sig=s&age_recipients=age1xy":  "azblob://c?sig=***&age_recipients=age1xy",
		"gs://b?Client_Secret=z&password=p":       "gs://b?Client_Secret=***&password=***",
		"https://user@host/x":                     "https://***@host/x",
		"redis://:pw3@${RHOST}:${RPORT}/0":        "redis://:***@${RHOST}:${RPORT}/0",
		"redis://:p%zzw4@host/0":                  "redis://:***@host/0",
		"redis://u:p@ss@host/0?x=1":               "redis://u:***@host/0?x=1",
		"redis://h/0?pass%zz=1&key=2":             "redis://h/0?pass%zz=***&key=***",
		"s3://AKIA:abc/def@host/b":                "s3://AKIA:***@host/b",
		"redis://:pa?ss@host/0":                   "redis://:***@host/0",
		"s3://b/p?x=a@b":                          "s3://b/p?x=a@b",
		"file:///m?secrets=reject&policy=/p.yaml": "file:///m?secrets=reject&policy=/p.yaml",
	} {
		if got := maskURL(raw); got != want {
			t.Errorf("maskURL(%q) = %q, want %q", raw, got, want)
		}
	}
}

// TestMCPConfig: a store's mcp settings are the defaults of cloudmem mcp's
// HTTP flags; the command line wins; --stdio and stdio ignore them.
func TestMCPConfig(t *testing.T) {
	st := &config.Store{Name: "team", URL: "./m", MCP: config.MCP{
		HTTP: "127.0.0.1:9", TokenFile: "/t.json", TLSCert: "/c.pem", TLSKey: "/k.pem", MaxRequestBytes: 77}}
	defaults := mcpFlags{maxRequestBytes: mcpserver.DefaultMaxRequestBytes, maxSessions: mcpserver.DefaultMaxSessions,
		maxTokenSessions: mcpserver.DefaultMaxTenantSessions, search: true,
		maxInFlight: mcpserver.DefaultMaxInFlight, maxTokenInFlight: mcpserver.DefaultMaxTenantInFlight,
		oauth: oauthFlags{claim: mcpserver.DefaultTenantClaim, leeway: mcpserver.DefaultLeeway}}
	with := func(change func(*mcpFlags)) mcpFlags {
		f := defaults
		change(&f)
		return f
	}
	for _, tc := range []struct {
		name      string
		store     *config.Store
		byDefault bool
		args      []string
		want      mcpFlags
		err       string
	}{
		{"settings", st, false, nil, with(func(f *mcpFlags) {
			f.http, f.tokenFile, f.tlsCert, f.tlsKey, f.maxRequestBytes = "127.0.0.1:9", "/t.json", "/c.pem", "/k.pem", 77
		}), ""},
		{"flags win", st, false, []string{"--http", ":8", "--token-file", "/o.json", "--max-request-bytes", "5"}, with(func(f *mcpFlags) {
			f.http, f.tokenFile, f.tlsCert, f.tlsKey, f.maxRequestBytes = ":8", "/o.json", "/c.pem", "/k.pem", 5
		}), ""},
		{"--stdio", st, false, []string{"--stdio"}, with(func(f *mcpFlags) { f.stdio = true }), ""},
		{"--stdio --http", st, false, []string{"--stdio", "--http", ":8"}, mcpFlags{}, "--stdio and --http cannot be used together"},
		{"the default store: stdio", st, true, nil, defaults, ""},
		{"the default store with --http", st, true, []string{"--http", ":8"}, with(func(f *mcpFlags) {
			f.http, f.tokenFile, f.tlsCert, f.tlsKey, f.maxRequestBytes = ":8", "/t.json", "/c.pem", "/k.pem", 77
		}), ""},
		{"no http setting", &config.Store{Name: "s", URL: "./m", MCP: config.MCP{TokenFile: "/t.json"}}, false, nil, defaults, ""},
		{"no config", nil, false, nil, defaults, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &app{storeConfig: tc.store, storeByDefault: tc.byDefault}
			var f mcpFlags
			cmd := mcpCommand(a, &f) // the command's own flags
			if err := cmd.Flags().Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := a.applyMCPConfig(cmd, &f)
			if got := errString(err); got != tc.err {
				t.Fatalf("applyMCPConfig error = %q, want %q", got, tc.err)
			}
			if err == nil && f != tc.want {
				t.Errorf("flags = %+v, want %+v", f, tc.want)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
