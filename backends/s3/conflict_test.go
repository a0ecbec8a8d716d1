package s3

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cloudmem/cloudmem/blob"
)

// fakeS3 answers PUTs with the statuses in puts, one each, and HEADs with
// 404. It records the methods it saw. MinIO never answers 409, so this is
// where the ConditionalRequestConflict path is tested.
type fakeS3 struct {
	mu      sync.Mutex
	puts    []int
	methods []string
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.methods = append(f.methods, r.Method)
	if r.Method != http.MethodPut || len(f.puts) == 0 {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	status := f.puts[0]
	f.puts = f.puts[1:]
	if status == http.StatusOK {
		w.Header().Set("ETag", `"etag"`)
		w.WriteHeader(status)
		return
	}
	code := map[int]string{http.StatusConflict: "ConditionalRequestConflict", http.StatusPreconditionFailed: "PreconditionFailed"}[status]
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>`+code+`</Code><Message>fake</Message></Error>`)
}

func TestPutConflictRetry(t *testing.T) {
	tests := []struct {
		name    string
		puts    []int
		wantErr error // nil: success
		methods []string
	}{
		{"409 then 200", []int{409, 200}, nil, []string{"PUT", "PUT"}},
		{"409 twice", []int{409, 409}, blob.ErrPrecondition, []string{"PUT", "PUT", "HEAD"}},
		{"409 then 412", []int{409, 412}, blob.ErrPrecondition, []string{"PUT", "PUT", "HEAD"}},
		{"412", []int{412}, blob.ErrPrecondition, []string{"PUT", "HEAD"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeS3{puts: tt.puts}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			client := awss3.New(awss3.Options{
				Region:       "us-east-1",
				BaseEndpoint: aws.String(srv.URL),
				UsePathStyle: true,
				Credentials:  aws.AnonymousCredentials{},
			})
			s, err := Open(context.Background(), "b", "p", &Options{Client: client})
			if err != nil {
				t.Fatal(err)
			}
			info, err := s.Put(t.Context(), "k", []byte("data"), blob.Cond{IfAbsent: true})
			if tt.wantErr == nil {
				if err != nil || info.Size != 4 || !versionMatches(`"etag"`, info.Version) || writeIDOf(info.Version) == "" {
					t.Fatalf("Put = %+v, %v; want success with ETag \"etag\" and a write id", info, err)
				}
			} else if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Put error = %v, want %v", err, tt.wantErr)
			}
			if !slices.Equal(fake.methods, tt.methods) {
				t.Fatalf("requests = %v, want %v", fake.methods, tt.methods)
			}
		})
	}
}
