package storeurl_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
	_ "github.com/cloudmem/cloudmem/crypt"
	"github.com/cloudmem/cloudmem/storeurl"
)

func TestRegisterWrapperPanics(t *testing.T) {
	wrap := func(_ context.Context, s blob.Store, _ url.Values) (blob.Store, error) { return s, nil }
	check := func(url.Values) error { return nil }
	for _, tc := range []struct {
		name string
		w    storeurl.Wrapper
		want string
	}{
		{"prefix", storeurl.Wrapper{Order: 1, Params: []string{"x"}, Check: check, Wrap: wrap}, `storeurl: RegisterWrapper called twice for "prefix"`},
		{"other", storeurl.Wrapper{Order: storeurl.OrderEncrypt, Params: []string{"x"}, Check: check, Wrap: wrap}, `storeurl: RegisterWrapper "other": order 200 is "encrypt"'s`},
		{"other", storeurl.Wrapper{Order: 1, Params: []string{"readonly"}, Check: check, Wrap: wrap}, `storeurl: RegisterWrapper "other": parameter readonly is "readonly"'s`},
		{"other", storeurl.Wrapper{Order: 1, Params: []string{"timeout"}, Check: check, Wrap: wrap}, `storeurl: RegisterWrapper "other": parameter timeout is storeurl's`},
		{"other", storeurl.Wrapper{Order: 1, Params: []string{"x"}, Check: check}, `storeurl: RegisterWrapper "other": needs a name, Params, Check and Wrap`},
		{"other", storeurl.Wrapper{Order: 1, Params: []string{"x"}, Wrap: wrap}, `storeurl: RegisterWrapper "other": needs a name, Params, Check and Wrap`},
	} {
		got := func() (msg string) {
			defer func() { msg = fmt.Sprint(recover()) }()
			storeurl.RegisterWrapper(tc.name, tc.w)
			return "no panic"
		}()
		if got != tc.want {
			t.Errorf("RegisterWrapper(%q, %+v) panicked with %q, want %q", tc.name, tc.w.Order, got, tc.want)
		}
	}
}

func TestTimeoutParam(t *testing.T) {
	for raw, want := range map[string]string{
		"mem://?timeout=0s":            "storeurl: timeout=\"0s\": want a Go duration from 1ms to 24h, such as 1s, 500ms or 2m",
		"mem://?timeout=fast":          "storeurl: timeout=\"fast\": want a Go duration from 1ms to 24h, such as 1s, 500ms or 2m",
		"mem://?timeout=999us":         "storeurl: timeout=\"999us\": want a Go duration from 1ms to 24h, such as 1s, 500ms or 2m",
		"mem://?timeout=24h0m1s":       "storeurl: timeout=\"24h0m1s\": want a Go duration from 1ms to 24h, such as 1s, 500ms or 2m",
		"mem://?timeout=1s&timeout=2s": "storeurl: parameter timeout given 2 times",
	} {
		if _, err := storeurl.Open(t.Context(), raw); err == nil || err.Error() != want {
			t.Errorf("Open(%q) = %v, want %q", raw, err, want)
		}
	}
	if _, err := storeurl.Open(t.Context(), "capture://h?timeout=1m30s"); err != nil {
		t.Fatal(err)
	}
	if got := captured.lastTimeout(); got.String() != "1m30s" {
		t.Errorf("Open(capture://h?timeout=1m30s): Location.Timeout = %v", got)
	}
	if _, err := storeurl.Open(t.Context(), "mem://?timeout=1s"); err != nil {
		t.Errorf("Open(mem://?timeout=1s): %v", err)
	}
}
