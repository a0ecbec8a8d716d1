package s3

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cloudmem/cloudmem/internal/redact"
)

// defaultEndpointRegion is the region used for a custom endpoint when the
// SDK's chain finds none; S3-compatible servers accept it.
const defaultEndpointRegion = "us-east-1"

// newClient builds a client from the SDK's default chain and opts.
func newClient(ctx context.Context, opts *Options) (*awss3.Client, error) {
	if opts.Endpoint != "" {
		u, err := url.Parse(opts.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return nil, fmt.Errorf("s3: endpoint %q: want http://host[:port] or https://host[:port]", redact.URL(opts.Endpoint))
		}
	}
	var load []func(*config.LoadOptions) error
	if opts.Region != "" {
		load = append(load, config.WithRegion(opts.Region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, fmt.Errorf("s3: loading the AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		if opts.Endpoint == "" {
			return nil, errors.New("s3: no region: set region= in the URL, Options.Region or AWS_REGION")
		}
		cfg.Region = defaultEndpointRegion
	}
	return awss3.NewFromConfig(cfg, func(o *awss3.Options) {
		if opts.Endpoint != "" {
			o.BaseEndpoint = aws.String(opts.Endpoint)
		}
		o.UsePathStyle = opts.PathStyle
	}), nil
}
