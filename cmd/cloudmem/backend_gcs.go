//go:build !no_gcs

package main

import _ "github.com/cloudmem/cloudmem/backends/gcs" // gs://
