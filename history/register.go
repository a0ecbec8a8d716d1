package history

import (
	"context"
	"net/url"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

// init registers the history parameters with storeurl, so that any store
// URL takes them (a program gets them by importing this package):
// storeurl.Open puts the Store above encryption (storeurl.OrderHistory),
// so that the records are encrypted like the memories, and below readonly.
func init() {
	storeurl.RegisterWrapper("history", storeurl.Wrapper{
		Order:  storeurl.OrderHistory,
		Params: Params,
		Check: func(params url.Values) error {
			_, _, err := ParseParams(params)
			return err
		},
		Wrap: func(_ context.Context, s blob.Store, params url.Values) (blob.Store, error) {
			opts, on, err := ParseParams(params)
			if err != nil || !on {
				return s, err
			}
			hs, err := New(s, &opts)
			if err != nil {
				return nil, err
			}
			return hs, nil
		},
	})
}
