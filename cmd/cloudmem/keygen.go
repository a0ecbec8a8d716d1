package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/crypt"
)

func init() { register(newKeygenCmd) }

// newKeygenCmd is "cloudmem keygen -o FILE [--post-quantum]": it writes a
// new age identity (a private key) to FILE, which must not exist, with mode
// 0600, and prints its recipient (the public key) on stdout. There is no
// default FILE: the private key goes to a file of its own, where the store
// URL's age_identity_file can name it, or, with -o - (asked for by name),
// to stdout, for a secret manager's input; the recipient then goes to
// stderr as "Public key: age1...".
func newKeygenCmd(a *app) *cobra.Command {
	var (
		out string
		pq  bool
	)
	cmd := &cobra.Command{
		Annotations: map[string]string{noStoreAnnotation: "yes"},
		Use:         "keygen -o FILE [--post-quantum]",
		Short:       "Write a new age identity file and print its recipient",
		Long: "Writes a new age identity (private key) to FILE, readable by its owner only (mode 0600),\n" +
			"and prints its recipient (public key) on stdout. Encrypt a store with it:\n" +
			"  --store 'file:///srv/memories?encrypt=age&age_identity_file=FILE'\n" +
			"or put the file's content in $" + crypt.EnvIdentity + " and leave age_identity_file out.\n" +
			"-o - writes the identity to stdout instead, and the recipient to stderr (\"Public key: age1...\").",
		Args: positional(),
		RunE: func(*cobra.Command, []string) error {
			if out == "" {
				return usageErrorf("no -o FILE given")
			}
			generate := crypt.GenerateIdentity
			if pq {
				generate = crypt.GenerateHybridIdentity
			}
			identity, recipient, err := generate()
			if err != nil {
				return err
			}
			if out == "-" {
				if _, err := io.WriteString(a.stdout, identity); err != nil {
					return fmt.Errorf("writing stdout: %w", err)
				}
				_, err = fmt.Fprintf(a.stderr, "Public key: %s\n", recipient)
				return err
			}
			if err := writeSecret(out, identity); err != nil {
				return err
			}
			_, err = fmt.Fprintln(a.stdout, recipient)
			return err
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the identity to `FILE` (required; it must not exist; - is stdout)")
	cmd.Flags().BoolVar(&pq, "post-quantum", false, "make a post-quantum hybrid key (age1pq1...) instead of an X25519 one (age1...)")
	return cmd
}

// writeSecret creates the file name, which must not exist, with mode 0600
// whatever the umask, and writes content to it. On failure it removes the
// file it created.
func writeSecret(name, content string) (err error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s already exists; keygen never overwrites a key", name)
		}
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(name)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return err
	}
	if _, err := f.WriteString(content); err != nil {
		return err
	}
	return f.Sync()
}
