// Package config reads cloudmem's config file: stores by name, so that a
// command names a store ("--store work") instead of repeating its URL, and
// an environment is a different file or a different default.
//
// The file is YAML (docs/config.md):
//
//	default: work
//	stores:
//	  work: s3://team-bucket/memories?region=eu-west-1
//	  private: file:///home/me/memories?encrypt=age&age_identity_file=${HOME}/.config/cloudmem/key.txt
//	  team:
//	    mounts:
//	      notes: redis://${REDIS_HOST}:6379/0
//	      docs: gs://docs-bucket/memories:ro
//	    mcp:
//	      http: 127.0.0.1:8080
//
// A store is a URL, or a mapping with url or mounts (a mount table: names
// and URLs, a trailing ":ro" making a mount read-only) and optional mcp and
// web settings. "${VAR}" in any value is replaced by the environment
// variable VAR, which must be set and not empty, so secrets stay out of the
// file; "$$" is one '$'. Every error names the file and the line.
//
// The package only reads: it opens no store.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cloudmem/cloudmem/mount"
)

// Environment variables.
const (
	// EnvConfig names the config file, instead of the default path.
	EnvConfig = "CLOUDMEM_CONFIG"
	// EnvXDGConfigHome is the base directory of user config files
	// (XDG Base Directory); $HOME/.config when unset.
	EnvXDGConfigHome = "XDG_CONFIG_HOME"
)

// ReadOnlySuffix, at the end of a mount's URL, makes the mount read-only.
const ReadOnlySuffix = ":ro"

// ErrNoConfig is the error of Load when the file is at its default path
// and that file does not exist: there is no config, which is no error for
// a command that names no store. A missing $CLOUDMEM_CONFIG is another
// error.
var ErrNoConfig = errors.New("config: there is no config file")

// ErrUnknownStore is wrapped by Config.Store's error for a name the file
// does not hold.
var ErrUnknownStore = errors.New("config: no such store")

// Config is a parsed config file. It is read-only after Load and safe for
// concurrent use.
type Config struct {
	// Path is the file it was read from.
	Path string
	// Default is the name of the default store, or "".
	Default string
	// Stores are the stores, in the order of the file.
	Stores []Store
	// Warnings are what a person should fix but that does not stop a
	// command (a file other users can read that names an identity file).
	Warnings []string

	getenv func(string) string
	nodes  map[string][2]*yaml.Node // a store's name: its key and value nodes
}

// Store is one named store. Exactly one of URL and Mounts is set. The
// Stores of a Config hold the values as written, "${VAR}" unexpanded;
// Config.Store returns one with its variables expanded. A Store is a value; it is safe for concurrent use
// when not modified.
type Store struct {
	Name   string
	URL    string  // a store URL, or ""
	Mounts []Mount // a mount table, in the order of the file, or nil
	MCP    MCP
	Web    Web
	Line   int // the line of the store's name in the file
}

// Mount is one mount of a Store's mount table. A Mount is a value, safe
// for concurrent use when not modified.
type Mount struct {
	Name     string
	URL      string // without the ":ro" suffix
	ReadOnly bool   // the URL ended with ":ro"
}

// MCP are the defaults of "cloudmem mcp" for a store; the zero value
// changes nothing. Flags given on the command line win. A value, safe for
// concurrent use when not modified.
type MCP struct {
	HTTP            string // --http ADDR
	TokenFile       string // --token-file FILE
	TLSCert         string // --tls-cert FILE
	TLSKey          string // --tls-key FILE
	MaxRequestBytes int64  // --max-request-bytes N; 0: unset
}

// Web are the settings of a web interface for a store; the zero value is
// unset. A value, safe for concurrent use when not modified.
type Web struct {
	Listen string // the address to listen on, host:port
}

// DefaultPath returns the config file's path under the environment getenv
// reads, and whether it was named explicitly ($CLOUDMEM_CONFIG): else
// $XDG_CONFIG_HOME/cloudmem/config.yaml, else
// $HOME/.config/cloudmem/config.yaml. It returns "" when none of these
// variables is set.
func DefaultPath(getenv func(string) string) (path string, explicit bool) {
	if p := getenv(EnvConfig); p != "" {
		return p, true
	}
	base := getenv(EnvXDGConfigHome)
	if base == "" {
		home := getenv("HOME")
		if home == "" {
			return "", false
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "cloudmem", "config.yaml"), false
}

// Load reads the config file DefaultPath names, expanding variables from
// getenv. It returns an error wrapping ErrNoConfig when the file is at its
// default path and does not exist (or no path can be made), and for a
// missing $CLOUDMEM_CONFIG an error saying so.
func Load(getenv func(string) string) (*Config, error) {
	path, explicit := DefaultPath(getenv)
	if path == "" {
		return nil, fmt.Errorf("%w ($%s, $%s and $HOME are unset)", ErrNoConfig, EnvConfig, EnvXDGConfigHome)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if explicit {
			return nil, fmt.Errorf("the config file %s ($%s) does not exist", path, EnvConfig)
		}
		return nil, fmt.Errorf("%w (%s)", ErrNoConfig, path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the config file: %w", err)
	}
	c, err := Parse(path, data, getenv)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o044 != 0 && namesIdentity(data) {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%s names an identity file and other users can read it; run chmod 600 %s", path, path))
	}
	return c, nil
}

// namesIdentity reports whether the file's text names an age identity
// file (the parameter age_identity_file).
func namesIdentity(data []byte) bool {
	return strings.Contains(string(data), "age_identity_file")
}

// Parse parses data, the content of the config file path (used in error
// messages), expanding variables from getenv.
func Parse(path string, data []byte, getenv func(string) string) (*Config, error) {
	p := &parser{path: path}
	c, err := p.file(data)
	if err != nil {
		return nil, err
	}
	c.Path, c.getenv = path, getenv
	return c, nil
}

// Names returns the names of the stores, in the order of the file.
func (c *Config) Names() []string {
	names := make([]string, len(c.Stores))
	for i, s := range c.Stores {
		names[i] = s.Name
	}
	return names
}

// Store returns the store called name with its variables expanded, or an
// error wrapping ErrUnknownStore that lists the names there are, or one
// naming the line of a variable that is not set. Only the store asked for
// is expanded: a variable another store needs may be unset.
func (c *Config) Store(name string) (Store, error) {
	if n, ok := c.nodes[name]; ok {
		p := &parser{path: c.Path, getenv: c.getenv, expandVars: true}
		return p.store(n[0], n[1])
	}
	return Store{}, &UnknownStoreError{Name: name, Path: c.Path, Names: c.Names()}
}

// UnknownStoreError is the error of Config.Store for a name the file does
// not hold. errors.Is(err, ErrUnknownStore) is true for it.
type UnknownStoreError struct {
	Name  string   // the name asked for
	Path  string   // the config file
	Names []string // the names it holds
}

func (e *UnknownStoreError) Error() string {
	return fmt.Sprintf("no store named %q in %s (stores: %s); a local directory is written ./%s",
		e.Name, e.Path, strings.Join(e.Names, ", "), e.Name)
}

// Is reports whether target is ErrUnknownStore.
func (e *UnknownStoreError) Is(target error) bool { return target == ErrUnknownStore }

// IsName reports whether a store value (--store, $CLOUDMEM_STORE) is a
// name of the config file rather than a URL or a path: it is not empty and
// holds no ':' and no '/'. A local directory without a '/' is written
// "./DIR".
func IsName(value string) bool {
	return value != "" && !strings.ContainsAny(value, ":/")
}

// checkName returns why name is not a valid store name, or "".
func checkName(name string) string {
	for i, r := range name {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		case i > 0 && (r == '.' || r == '_' || r == '-'):
		default:
			return fmt.Sprintf("store name %q: want letters, digits, '.', '_' or '-', starting with a letter or digit", name)
		}
	}
	if name == "" {
		return `store name "": want letters, digits, '.', '_' or '-', starting with a letter or digit`
	}
	return ""
}

// parser walks the YAML node tree, so that every error has its line.
type parser struct {
	path       string
	getenv     func(string) string
	expandVars bool // replace ${VAR}; else only check the syntax
}

func (p *parser) errorf(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", p.path, n.Line, fmt.Sprintf(format, args...))
}

// file parses the whole document.
func (p *parser) file(data []byte) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, p.yamlError(err)
	}
	c := &Config{nodes: map[string][2]*yaml.Node{}}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return c, nil // an empty file
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, p.errorf(root, "the file must be a mapping (default, stores)")
	}
	var defNode *yaml.Node
	err := p.fields(root, func(key, value *yaml.Node) error {
		switch key.Value {
		case "default":
			s, err := p.str(value, "default")
			if err != nil {
				return err
			}
			c.Default, defNode = s, value
		case "stores":
			if value.Kind != yaml.MappingNode {
				return p.errorf(value, "stores must be a mapping")
			}
			return p.fields(value, func(k, v *yaml.Node) error {
				if why := checkName(k.Value); why != "" {
					return p.errorf(k, "%s", why)
				}
				if slices.Contains(c.Names(), k.Value) {
					return p.errorf(k, "store %q is named twice", k.Value)
				}
				s, err := p.store(k, v)
				if err != nil {
					return err
				}
				c.Stores = append(c.Stores, s)
				c.nodes[k.Value] = [2]*yaml.Node{k, v}
				return nil
			})
		default:
			return p.errorf(key, "unknown key %q (want default, stores)", key.Value)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if c.Default != "" && !slices.Contains(c.Names(), c.Default) {
		return nil, p.errorf(defNode, "default %q is not a store of this file (stores: %s)", c.Default, strings.Join(c.Names(), ", "))
	}
	return c, nil
}

// yamlError turns yaml.v3's "yaml: line N: msg" into "path:N: msg".
func (p *parser) yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, text, ok := strings.Cut(rest, ": "); ok {
			if _, err := strconv.Atoi(num); err == nil {
				return fmt.Errorf("%s:%s: %s", p.path, num, text)
			}
		}
	}
	return fmt.Errorf("%s: %s", p.path, msg)
}

// fields calls fn for each key and value of the mapping n, in order. Keys
// must be plain strings, each given once (fn may refuse a key given twice
// in words of its own first).
func (p *parser) fields(n *yaml.Node, fn func(key, value *yaml.Node) error) error {
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i], n.Content[i+1]
		if key.Kind != yaml.ScalarNode {
			return p.errorf(key, "a key must be a string")
		}
		if err := fn(key, value); err != nil {
			return err
		}
		if seen[key.Value] {
			return p.errorf(key, "key %q is given twice", key.Value)
		}
		seen[key.Value] = true
	}
	return nil
}

// str returns the scalar n, variables expanded; what names it in errors.
func (p *parser) str(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", p.errorf(n, "%s must be a string", what)
	}
	return p.expand(n)
}

// expand replaces ${VAR} in n's value with the variable's value, and $$
// with $. A '$' before anything else stays.
func (p *parser) expand(n *yaml.Node) (string, error) {
	s := n.Value
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 || i == len(s)-1 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			s = s[i+2:]
		case '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return "", p.errorf(n, "a ${ without its }") // not the value: it may hold a password
			}
			name := s[i+2 : i+end]
			if !p.expandVars {
				b.WriteString(s[i : i+end+1])
				s = s[i+end+1:]
				continue
			}
			v := p.getenv(name)
			if v == "" {
				return "", p.errorf(n, "${%s} is not set (a variable the file names must be set and not empty)", name)
			}
			whole := b.Len() == 0 && i == 0 && end == len(s)-1
			if !whole && reshapes(b.String(), v, s[i+end+1:]) {
				return "", p.errorf(n, "${%s} holds a character that would change the URL around it (?, #, & or @; / in the host; : in the user); "+
					"percent-encode it in the variable, or put the whole URL in one variable", name)
			}
			b.WriteString(v)
			s = s[i+end+1:]
		default:
			b.WriteByte('$')
			s = s[i+1:]
		}
	}
}

// reshapes reports whether the value v of a variable, written between
// before and after in a URL, would change the URL's structure instead of
// filling a part of it: a '?', '#', '&' or '@' anywhere (a new query, a
// fragment, a parameter, a user), a '/' in the authority (the end of the
// host), and a ':' in the user name (where the password starts) or before
// the scheme's "://". A ':' in the host (a port, an IPv6 address) or in a
// password fills that part. A variable that is the whole value may be a
// whole URL.
func reshapes(before, v, after string) bool {
	if strings.ContainsAny(v, "?#&@") {
		return true
	}
	i := strings.Index(before, "://")
	if i < 0 {
		// before the scheme ends (or in a URL without an authority): the
		// value could write the scheme and a host of its own
		return !strings.Contains(before, ":") && strings.ContainsAny(v, ":/")
	}
	auth := before[i+3:]
	if strings.ContainsAny(auth, "/?#") {
		return false // in the path or the query
	}
	rest := after
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		rest = rest[:end]
	}
	inUser := !strings.Contains(auth, "@") && !strings.Contains(auth, ":") && strings.Contains(rest, "@")
	return strings.Contains(v, "/") || inUser && strings.Contains(v, ":")
}

// store parses one store: a URL, or a mapping.
func (p *parser) store(key, n *yaml.Node) (Store, error) {
	s := Store{Name: key.Value, Line: key.Line}
	if n.Kind == yaml.ScalarNode {
		u, err := p.str(n, fmt.Sprintf("store %q", s.Name))
		if err != nil {
			return s, err
		}
		if u == "" {
			return s, p.errorf(n, "store %q: give url or mounts", s.Name)
		}
		s.URL = u
		return s, p.checkURL(n, fmt.Sprintf("store %q", s.Name), u)
	}
	if n.Kind != yaml.MappingNode {
		return s, p.errorf(n, "store %q must be a string (a URL) or a mapping", s.Name)
	}
	hasURL, hasMounts := false, false
	err := p.fields(n, func(k, v *yaml.Node) error {
		var err error
		switch k.Value {
		case "url":
			hasURL = true
			s.URL, err = p.str(v, fmt.Sprintf("the url of store %q", s.Name))
		case "mounts":
			hasMounts = true
			s.Mounts, err = p.mounts(s.Name, v)
		case "mcp":
			s.MCP, err = p.mcp(s.Name, v)
		case "web":
			s.Web, err = p.web(s.Name, v)
		default:
			err = p.errorf(k, "unknown key %q in store %q (want url, mounts, mcp, web)", k.Value, s.Name)
		}
		return err
	})
	if err != nil {
		return s, err
	}
	switch {
	case hasURL && hasMounts:
		return s, p.errorf(key, "store %q: give url or mounts, not both", s.Name)
	case s.URL == "" && len(s.Mounts) == 0:
		return s, p.errorf(key, "store %q: give url or mounts", s.Name)
	}
	return s, p.checkURL(key, fmt.Sprintf("store %q", s.Name), s.URL)
}

// checkURL refuses a store URL that is a name (IsName): it would be looked
// up again. A value whose variables are not expanded yet is checked when
// they are.
func (p *parser) checkURL(n *yaml.Node, where, u string) error {
	if IsName(u) && (p.expandVars || !strings.Contains(n.Value, "$")) {
		return p.errorf(n, "%s: %q is a name, not a URL; a local directory is written ./%s", where, u, u)
	}
	return nil
}

// mounts parses a mount table: a mapping of mount names to URLs.
func (p *parser) mounts(store string, n *yaml.Node) ([]Mount, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errorf(n, "the mounts of store %q must be a mapping (NAME: URL)", store)
	}
	var ms []Mount
	err := p.fields(n, func(k, v *yaml.Node) error {
		if err := mount.CheckName(k.Value); err != nil {
			why := err.Error()
			if te, ok := errors.AsType[*mount.TableError](err); ok {
				why = te.Reason
			}
			return p.errorf(k, "store %q: mount %q: %s", store, k.Value, why)
		}
		for _, m := range ms {
			if m.Name == k.Value {
				return p.errorf(k, "store %q: mount %q is named twice", store, k.Value)
			}
		}
		u, err := p.str(v, fmt.Sprintf("the URL of mount %q of store %q", k.Value, store))
		if err != nil {
			return err
		}
		m := Mount{Name: k.Value, URL: u}
		if rest, ro := strings.CutSuffix(u, ReadOnlySuffix); ro {
			m.URL, m.ReadOnly = rest, true
		}
		if m.URL == "" {
			return p.errorf(v, "store %q: mount %q has no URL", store, k.Value)
		}
		if err := p.checkURL(v, fmt.Sprintf("store %q, mount %q", store, k.Value), m.URL); err != nil {
			return err
		}
		ms = append(ms, m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, p.errorf(n, "store %q: mounts is empty", store)
	}
	return ms, nil
}

// mcp parses a store's mcp settings.
func (p *parser) mcp(store string, n *yaml.Node) (MCP, error) {
	var m MCP
	if n.Kind != yaml.MappingNode {
		return m, p.errorf(n, "the mcp settings of store %q must be a mapping", store)
	}
	err := p.fields(n, func(k, v *yaml.Node) error {
		what := fmt.Sprintf("%s of store %q", k.Value, store)
		var err error
		switch k.Value {
		case "http":
			m.HTTP, err = p.str(v, what)
		case "token_file":
			m.TokenFile, err = p.str(v, what)
		case "tls_cert":
			m.TLSCert, err = p.str(v, what)
		case "tls_key":
			m.TLSKey, err = p.str(v, what)
		case "max_request_bytes":
			var s string
			if s, err = p.str(v, what); err == nil {
				n, perr := strconv.ParseInt(s, 10, 64)
				if perr != nil || n < 1 {
					return p.errorf(v, "%s must be a number of 1 or more", what)
				}
				m.MaxRequestBytes = n
			}
		default:
			err = p.errorf(k, "unknown key %q in the mcp settings of store %q (want http, token_file, tls_cert, tls_key, max_request_bytes)", k.Value, store)
		}
		return err
	})
	return m, err
}

// web parses a store's web settings.
func (p *parser) web(store string, n *yaml.Node) (Web, error) {
	var w Web
	if n.Kind != yaml.MappingNode {
		return w, p.errorf(n, "the web settings of store %q must be a mapping", store)
	}
	err := p.fields(n, func(k, v *yaml.Node) error {
		if k.Value != "listen" {
			return p.errorf(k, "unknown key %q in the web settings of store %q (want listen)", k.Value, store)
		}
		var err error
		w.Listen, err = p.str(v, fmt.Sprintf("listen of store %q", store))
		return err
	})
	return w, err
}
