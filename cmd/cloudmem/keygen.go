package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/cloudmem/cloudmem/crypt"
)

// runKeygen implements "cloudmem keygen -o FILE [--post-quantum]": it
// writes a new age identity (a private key) to FILE, which must not exist,
// with mode 0600, and prints its recipient (the public key) on stdout.
// There is no default FILE and no way to print the private key: it goes to
// a file of its own, where storeurl's age_identity_file can name it, or
// from where it can be moved into $CLOUDMEM_AGE_IDENTITY.
func runKeygen(c *cli, args []string) int {
	fs := flag.NewFlagSet("cloudmem keygen", flag.ContinueOnError)
	out := fs.String("o", "", "write the identity to `FILE` (required; it must not exist)")
	pq := fs.Bool("post-quantum", false, "make a post-quantum hybrid key (age1pq1...) instead of an X25519 one (age1...)")
	usage := plainUsage("keygen -o FILE [--post-quantum]",
		"Writes a new age identity (private key) to FILE, readable by its owner only (mode 0600),\n"+
			"and prints its recipient (public key) on stdout. Encrypt a store with it:\n"+
			"  --store 'file:///srv/memories?encrypt=age&age_identity_file=FILE'\n"+
			"or put the file's content in $"+crypt.EnvIdentity+" and leave age_identity_file out.")
	if _, code, done := c.parseArgs(fs, args, usage); done {
		return code
	}
	if *out == "" {
		return c.usageError(fs, usage, errors.New("no -o FILE given"))
	}
	generate := crypt.GenerateIdentity
	if *pq {
		generate = crypt.GenerateHybridIdentity
	}
	identity, recipient, err := generate()
	if err != nil {
		return c.fail("keygen", err)
	}
	if err := writeSecret(*out, identity); err != nil {
		return c.fail("keygen", err)
	}
	fmt.Fprintln(c.stdout, recipient)
	return exitOK
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
