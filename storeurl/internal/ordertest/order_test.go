// Package ordertest checks the order in which storeurl.Open applies
// registered wrappers. It is a test binary of its own, because the test
// wrapper it registers would otherwise show in the parameter lists that
// storeurl's own tests compare.
package ordertest_test

import (
	"context"
	"net/url"
	"slices"
	"testing"

	_ "github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	_ "github.com/cloudmem/cloudmem/crypt"
	"github.com/cloudmem/cloudmem/storeurl"
)

// seen records, per open, what the test wrapper found beneath it.
type seen struct {
	readOnly bool
	keyBytes int
	value    string
}

var marks = make(chan seen, 1)

func init() {
	storeurl.RegisterWrapper("mark", storeurl.Wrapper{
		Order:  storeurl.OrderHistory + 50,
		Params: []string{"mark"},
		Wrap: func(_ context.Context, s blob.Store, params url.Values) (blob.Store, error) {
			marks <- seen{blob.IsReadOnly(s), blob.KeyBytes(s), params.Get("mark")}
			return s, nil
		},
	})
}

// TestWrapperOrder: every layer lands in its fixed place, whatever the
// order of the parameters: prefix beneath the test wrapper (which sees the
// shorter key budget), readonly above it (so it sees a writable store).
func TestWrapperOrder(t *testing.T) {
	if got, want := storeurl.Wrappers(), []string{"prefix", "encrypt", "mark", "readonly", "limits"}; !slices.Equal(got, want) {
		t.Fatalf("Wrappers() = %q, want %q", got, want)
	}
	s, err := storeurl.Open(t.Context(), "mem://?readonly=1&mark=here&prefix=/team/")
	if err != nil {
		t.Fatal(err)
	}
	got := <-marks
	if want := (seen{false, blob.MaxKeyLen - len("team/"), "here"}); got != want {
		t.Fatalf("the wrapper at order %d saw %+v, want %+v", storeurl.OrderHistory+50, got, want)
	}
	if !blob.IsReadOnly(s) {
		t.Fatal("readonly=1 did not make the store read-only")
	}
	if _, err := storeurl.Open(t.Context(), "mem://?mark=a&mark=b"); err == nil || err.Error() != "storeurl: parameter mark given 2 times" {
		t.Fatalf("a repeated wrapper parameter: %v", err)
	}
}
