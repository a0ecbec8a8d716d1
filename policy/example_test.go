package policy_test

import (
	"fmt"

	"github.com/cloudmem/cloudmem/policy"
)

// A policy file's redact mode: the secret is found by its rule and line,
// and replaced before anything is written.
func Example() {
	p, err := policy.Parse("policy.yaml", []byte("secrets: redact\nallow:\n  paths: ['/memories/fixtures/**']\n"))
	if err != nil {
		panic(err)
	}
	text := []byte("deploy notes\naws key AKIAZ3MSJV4WWNKWW5FG (rotated monthly)\n")
	found, err := p.Scan("/memories/deploy.md", text)
	if err != nil {
		panic(err)
	}
	for _, f := range found {
		fmt.Printf("%s on line %d\n", f.Rule, f.Line)
	}
	fmt.Printf("%s", policy.Redacted(text, found))
	fixtures, _ := p.Scan("/memories/fixtures/keys.md", text)
	fmt.Println("findings in an allow-listed path:", len(fixtures))
	// Output:
	// aws-access-token on line 2
	// deploy notes
	// aws key [REDACTED:aws-access-token] (rotated monthly)
	// findings in an allow-listed path: 0
}
