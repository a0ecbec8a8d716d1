package s3

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cloudmem/cloudmem/blob"
)

// The store reports a Traits.HidesUnderObjects of true only once a server that names
// itself MinIO has answered, a 404 included, and never for another server.
func TestListHidesUnderObjects(t *testing.T) {
	for _, tt := range []struct {
		server string
		want   bool
	}{
		{"MinIO", true},
		{"AmazonS3", false},
		{"", false},
	} {
		t.Run(tt.server, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.server != "" {
					w.Header().Set("Server", tt.server)
				}
				w.WriteHeader(http.StatusNotFound)
			}))
			defer srv.Close()
			client := awss3.New(awss3.Options{
				Region:       "us-east-1",
				BaseEndpoint: aws.String(srv.URL),
				UsePathStyle: true,
				Credentials:  aws.AnonymousCredentials{},
			})
			s, err := Open(context.Background(), "b", "", &Options{Client: client})
			if err != nil {
				t.Fatal(err)
			}
			if blob.ListHidesUnderObjects(s) {
				t.Fatal("ListHidesUnderObjects = true before any answer")
			}
			if _, err := s.Stat(t.Context(), "k"); !errors.Is(err, blob.ErrNotExist) {
				t.Fatalf("Stat = %v, want ErrNotExist", err)
			}
			if got := blob.ListHidesUnderObjects(s); got != tt.want {
				t.Fatalf("after an answer from %q: ListHidesUnderObjects = %v, want %v", tt.server, got, tt.want)
			}
		})
	}
}
