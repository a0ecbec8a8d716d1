package mem

import (
	"context"
	"fmt"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

// Scheme is the URL scheme this package registers with storeurl.
const Scheme = "mem"

// openURL opens "mem://" (or "mem:"): a new, empty store on every call. The
// URL takes no host, path, user or parameter of its own; timeout= bounds
// each call like on every scheme, though no call here waits on anything
// but the store's own lock.
func openURL(_ context.Context, loc *storeurl.Location) (blob.Store, error) {
	if u := loc.URL; u.User != nil || u.Host != "" || u.Opaque != "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("mem: the URL is just mem:// (no host or path), got %s", u.Redacted())
	}
	if loc.Timeout > 0 {
		return blob.WithTimeout(New(nil), loc.Timeout), nil
	}
	return New(nil), nil
}

func init() { storeurl.Register(Scheme, storeurl.Backend{Open: openURL}) }
