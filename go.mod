module github.com/cloudmem/cloudmem

go 1.26
