package storeurl

import (
	"context"
	"fmt"
	"net/url"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
)

// mem:// is registered here rather than by package mem, so that mem does
// not import storeurl: storeurl imports crypt (for encrypt=age), and crypt's
// own white-box tests use mem; mem importing storeurl would make that an
// import cycle.
func init() {
	Register(mem.Scheme, Backend{Open: openMem})
}

// openMem opens "mem://" (or "mem:"): a new, empty store on every call. The
// URL takes no host, path, user or parameter of its own.
func openMem(_ context.Context, u *url.URL) (blob.Store, error) {
	if u.User != nil || u.Host != "" || u.Opaque != "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("mem: the URL is just mem:// (no host or path), got %s", u.Redacted())
	}
	if err := CheckParams(u); err != nil {
		return nil, err
	}
	if d := Timeout(u); d > 0 {
		return blob.WithTimeout(mem.New(nil), d), nil
	}
	return mem.New(nil), nil
}
