package main

// Stores by name: --store NAME, $CLOUDMEM_STORE=NAME, copy's SRC and DST,
// and the config file's default name a store of the config file (package
// config). A value with no ':' and no '/' is a name.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/config"
	"github.com/cloudmem/cloudmem/storeurl"
)

// noStoreAnnotation, in a command's Annotations, says that the command
// opens no store of the configuration, so resolveStore does not run (and a
// broken config file does not stop it).
const noStoreAnnotation = "cloudmem.nostore"

// loadConfig reads the config file once per run and prints its warnings on
// stderr. It returns an error wrapping config.ErrNoConfig when there is
// none.
func (a *app) loadConfig() (*config.Config, error) {
	if !a.cfgLoaded {
		a.cfgLoaded = true
		a.cfg, a.cfgErr = config.Load(a.getenv)
		if a.cfg != nil {
			for _, w := range a.cfg.Warnings {
				fmt.Fprintf(a.stderr, "cloudmem: warning: %s\n", w)
			}
		}
	}
	return a.cfg, a.cfgErr
}

// namedStore returns the store of the config file called name.
func (a *app) namedStore(name string) (config.Store, error) {
	cfg, err := a.loadConfig()
	if errors.Is(err, config.ErrNoConfig) {
		path, _ := config.DefaultPath(a.getenv)
		return config.Store{}, fmt.Errorf("no store named %q: there is no config file (%s); a local directory is written ./%s", name, path, name)
	}
	if err != nil {
		return config.Store{}, err
	}
	return cfg.Store(name)
}

// resolveStore runs before every command that may open a store: when the
// store is given by name (--store, $CLOUDMEM_STORE, or, when neither is
// set, the config's default), it replaces the name by the store's URL, or
// by its mount table, so that every command sees a URL or --mount values.
func (a *app) resolveStore(cmd *cobra.Command) error {
	for c := cmd; c != nil; c = c.Parent() {
		if c.Annotations[noStoreAnnotation] != "" || c.Name() == "help" || c.Name() == "completion" ||
			strings.HasPrefix(c.Name(), "__complete") {
			return nil
		}
	}
	if len(a.mounts) > 0 {
		return nil // openMounts refuses a --store beside them
	}
	value := a.storeFlag
	if value == "" {
		value = a.getenv(storeEnv)
	}
	if value == "" {
		cfg, err := a.loadConfig()
		if errors.Is(err, config.ErrNoConfig) {
			return nil
		}
		if err != nil {
			return err
		}
		value, a.storeByDefault = cfg.Default, cfg.Default != ""
	}
	if !config.IsName(value) {
		return nil
	}
	st, err := a.namedStore(value)
	if err != nil {
		return err
	}
	a.storeConfig = &st
	if st.URL != "" {
		a.storeFlag = st.URL
		return nil
	}
	a.storeFlag = ""
	a.mounts = mountValues(st.Mounts)
	return nil
}

// mountValues returns the --mount values of a config mount table.
func mountValues(ms []config.Mount) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name + "=" + m.URL
		if m.ReadOnly {
			out[i] += readOnlySuffix
		}
	}
	return out
}

// openNamed opens the config file's store name for acc (copy's SRC or DST).
func (a *app) openNamed(ctx context.Context, name string, acc access) (blob.Store, error) {
	st, err := a.namedStore(name)
	if err != nil {
		return nil, err
	}
	return a.openConfigStore(ctx, st, acc)
}

// openConfigStore opens st, a store of the config file, for acc.
func (a *app) openConfigStore(ctx context.Context, st config.Store, acc access) (blob.Store, error) {
	if st.URL != "" {
		return a.openURL(ctx, st.URL, acc) // never a name: config refuses one
	}
	return a.openMountSpecs(ctx, configSpecs(st), acc) // mount.go
}

func init() { register(newConfigCmd) }

// newConfigCmd is "cloudmem config ls|get|path|check".
func newConfigCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config COMMAND",
		Short: "List and check the stores of the config file",
		Long: "The config file names stores, so that --store NAME (or $" + storeEnv + "=NAME) stands for a URL.\n" +
			"It is $" + config.EnvConfig + ", else $" + config.EnvXDGConfigHome + "/cloudmem/config.yaml, else\n" +
			"$HOME/.config/cloudmem/config.yaml:\n\n" +
			"  default: work\n" +
			"  stores:\n" +
			"    work: s3://team-bucket/memories?region=eu-west-1\n" +
			"    private: file:///home/me/memories?encrypt=age&age_identity_file=${HOME}/.config/cloudmem/key.txt\n" +
			"    team:\n" +
			"      mounts:\n" +
			"        notes: redis://${REDIS_HOST}:6379/0\n" +
			"        docs: gs://docs-bucket/memories:ro\n" +
			"      mcp:\n" +
			"        http: 127.0.0.1:8080\n\n" +
			"A value with no ':' and no '/' is a name; a local directory without a '/' is written ./DIR.\n" +
			"${VAR} is read from the environment when the store is used. Without --store, --mount and\n" +
			"$" + storeEnv + ", the store is the file's default, else " + defaultStore + ".",
		Annotations: map[string]string{noStoreAnnotation: "yes"},
		Args:        cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return usageErrorf("no command given (ls, get, path or check)")
		},
	}
	cmd.AddCommand(
		&cobra.Command{
			Use:   "ls",
			Short: "List the stores of the config file, credentials masked",
			Args:  positional(),
			RunE: func(*cobra.Command, []string) error {
				cfg, err := a.requireConfig()
				if err != nil {
					return err
				}
				w := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
				fmt.Fprintln(w, "  NAME\tSTORE")
				for _, st := range cfg.Stores {
					mark := " "
					if st.Name == cfg.Default {
						mark = "*"
					}
					fmt.Fprintf(w, "%s %s\t%s\n", mark, st.Name, storeLine(st))
				}
				return w.Flush()
			},
		},
		&cobra.Command{
			Use:   "get [NAME]",
			Short: "Print one store of the config file (default: the default store), credentials masked",
			Args:  positional("[NAME]"),
			RunE: func(_ *cobra.Command, args []string) error {
				cfg, err := a.requireConfig()
				if err != nil {
					return err
				}
				name := cfg.Default
				if len(args) == 1 {
					name = args[0]
				} else if name == "" {
					return fmt.Errorf("the config file %s has no default; name a store", cfg.Path)
				}
				for _, st := range cfg.Stores {
					if st.Name == name {
						_, err := fmt.Fprintln(a.stdout, storeLine(st))
						return err
					}
				}
				_, err = cfg.Store(name) // the unknown-store error
				return err
			},
		},
		&cobra.Command{
			Use:   "path",
			Short: "Print the config file's path, whether or not it exists",
			Args:  positional(),
			RunE: func(*cobra.Command, []string) error {
				path, _ := config.DefaultPath(a.getenv)
				_, err := fmt.Fprintln(a.stdout, path)
				return err
			},
		},
		&cobra.Command{
			Use:   "check",
			Short: "Open every store of the config file and check that it answers",
			Long: "Opens every store of the config file read-only and reads one key that does not exist, a\n" +
				"cheap call that reaches the storage. Prints \"ok    NAME\" or \"FAIL  NAME: cause\" for each;\n" +
				"exit status 1 when one failed.",
			Args: positional(),
			RunE: func(cmd *cobra.Command, _ []string) error {
				cfg, err := a.requireConfig()
				if err != nil {
					return err
				}
				failed := 0
				for _, st := range cfg.Stores {
					if err := a.checkStore(cmd.Context(), cfg, st.Name); err != nil {
						failed++
						fmt.Fprintf(a.stdout, "FAIL  %s: %s\n", st.Name, firstLine(a.describe(err)))
						continue
					}
					fmt.Fprintf(a.stdout, "ok    %s\n", st.Name)
				}
				if failed > 0 {
					return fmt.Errorf("%d of %d stores failed", failed, len(cfg.Stores))
				}
				return nil
			},
		},
	)
	return cmd
}

// requireConfig is loadConfig for the config commands: no config file is
// an error that says where it would be.
func (a *app) requireConfig() (*config.Config, error) {
	cfg, err := a.loadConfig()
	if errors.Is(err, config.ErrNoConfig) {
		path, _ := config.DefaultPath(a.getenv)
		return nil, fmt.Errorf("there is no config file (%s); see 'cloudmem help config'", path)
	}
	return cfg, err
}

// checkKey is the key config check reads: in the store's reserved space,
// where no memory file lies, and never written.
const checkKey = ".cloudmem/config-check"

// checkStore opens the store name read-only and makes one cheap call that
// reaches the storage: a Get of a key that does not exist.
func (a *app) checkStore(ctx context.Context, cfg *config.Config, name string) error {
	st, err := cfg.Store(name)
	if err != nil {
		return err
	}
	if st.URL != "" {
		return checkURL(ctx, a, st.URL)
	}
	if err := a.checkOverlap(configSpecs(st)); err != nil { // mount.go
		return err
	}
	for _, m := range st.Mounts {
		if err := checkURL(ctx, a, m.URL); err != nil {
			return &noteError{prefix: "mount " + m.Name + ": ", err: err}
		}
	}
	return nil
}

// checkURL opens the store rawURL read-only and Gets checkKey.
func checkURL(ctx context.Context, a *app, rawURL string) error {
	s, err := a.openURL(ctx, rawURL, readOnly)
	if err != nil {
		return err
	}
	defer blob.Close(s)
	return probe(ctx, s)
}

// probe makes one cheap call that reaches the storage (a read of checkKey,
// which does not exist) and returns its error, nil when the store answered.
func probe(ctx context.Context, s blob.Store) error {
	if _, _, err := s.Get(ctx, checkKey, 1); err != nil && !errors.Is(err, blob.ErrNotExist) {
		return err
	}
	return nil
}

// reportStore tells the person who started the MCP server whether the
// store answered, on stderr, so that a client showing the server as
// connected does not hide a broken store (issue 26 item 9); the server
// serves either way, and each command reports a failure until the store
// answers.
func (a *app) reportStore(ctx context.Context, s blob.Store) {
	if err := probe(ctx, s); err != nil {
		fmt.Fprintf(a.stderr, "cloudmem mcp: warning: the store did not answer: %s; serving anyway, each command reports the failure until it answers\n", a.describe(err))
		return
	}
	fmt.Fprintln(a.stderr, "cloudmem mcp: the store answered")
}

// storeLine is a store as config ls and get print it: its URL, or its
// mount table, credentials masked.
func storeLine(st config.Store) string {
	if st.URL != "" {
		return maskURL(st.URL)
	}
	parts := make([]string, len(st.Mounts))
	for i, m := range st.Mounts {
		parts[i] = m.Name + "=" + maskURL(m.URL)
		if m.ReadOnly {
			parts[i] += readOnlySuffix
		}
	}
	return "mounts: " + strings.Join(parts, " ")
}

// maskURL returns raw with its credentials replaced by "***": the
// userinfo's password (or a user without one), and the value of every query
// parameter whose name looks secret (secretParam). It works on the text as
// written, so a URL that does not parse (a ${VAR} in its host, a bad
// escape) is masked too. A bare path is returned as it is.
func maskURL(raw string) string {
	if storeurl.IsPath(raw) {
		return raw
	}
	// The userinfo ends at the last '@' before the query: a password may
	// hold '/' (AWS secrets do). When the URL does not parse, a '@' after a
	// '?' may end it too (a password with '?'): mask up to the last '@',
	// which may hide more than the userinfo, never less.
	if i := strings.Index(raw, "://"); i >= 0 {
		rest := raw[i+3:]
		at := strings.LastIndexByte(rest[:indexOr(rest, "?#")], '@')
		if _, err := url.Parse(raw); err != nil && at < 0 {
			at = strings.LastIndexByte(rest, '@')
		}
		if at >= 0 {
			masked := "***"
			if user, _, ok := strings.Cut(rest[:at], ":"); ok && !strings.ContainsAny(user, "/?#") {
				masked = user + ":***"
			}
			raw = raw[:i+3] + masked + rest[at:]
		}
	}
	head, query, hasQuery := strings.Cut(raw, "?")
	if !hasQuery {
		return head
	}
	parts := strings.Split(query, "&")
	for i, p := range parts {
		name, _, ok := strings.Cut(p, "=")
		if key, err := url.QueryUnescape(name); ok && (err != nil || secretParam(key)) {
			parts[i] = name + "=***"
		}
	}
	return head + "?" + strings.Join(parts, "&")
}

// indexOr returns the index of the first of chars in s, or len(s).
func indexOr(s, chars string) int {
	if i := strings.IndexAny(s, chars); i >= 0 {
		return i
	}
	return len(s)
}

// maskStore is maskURL for what names a store: a URL, or a mount table's
// "mounts: NAME=URL[:ro] ..." (mountsName), each URL masked.
func maskStore(value string) string {
	rest, ok := strings.CutPrefix(value, mountsScheme)
	if !ok {
		return maskURL(value)
	}
	parts := strings.Fields(rest)
	for i, p := range parts {
		if name, u, ok := strings.Cut(p, "="); ok {
			parts[i] = name + "=" + maskURL(u)
		}
	}
	return mountsScheme + strings.Join(parts, " ")
}

// secretParam reports whether a query parameter's value is a credential.
func secretParam(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "age_identity_file", "age_recipients", "secrets": // a path, public keys, a write policy's mode
		return false
	case "sig":
		return true
	}
	for _, w := range []string{"secret", "password", "token", "key", "credential"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// applyMCPConfig sets the flags of "cloudmem mcp" that the command line
// does not give from the mcp settings of the config's store, if any. With
// --stdio the store is served on stdio, its settings aside.
func (a *app) applyMCPConfig(cmd *cobra.Command, f *mcpFlags) error {
	if f.stdio {
		if f.http != "" {
			return usageErrorf("--stdio and --http cannot be used together")
		}
		return nil
	}
	if a.storeConfig == nil {
		return nil
	}
	m := a.storeConfig.MCP
	set := func(flag string, dst *string, v string) {
		if v != "" && !cmd.Flags().Changed(flag) {
			*dst = v
		}
	}
	if !a.storeByDefault { // a client that starts plain "cloudmem mcp" speaks stdio
		set("http", &f.http, m.HTTP)
	}
	if f.http == "" {
		return nil // stdio: the HTTP settings do not apply
	}
	set("token-file", &f.tokenFile, m.TokenFile)
	set("tls-cert", &f.tlsCert, m.TLSCert)
	set("tls-key", &f.tlsKey, m.TLSKey)
	if m.MaxRequestBytes > 0 && !cmd.Flags().Changed("max-request-bytes") {
		f.maxRequestBytes = m.MaxRequestBytes
	}
	return nil
}
