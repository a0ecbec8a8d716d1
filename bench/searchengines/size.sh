#!/usr/bin/env bash
# bench/searchengines/size.sh: the binary size and the dependencies each
# search engine adds to a program (see doc.go). For each of cmd/base (the
# memory tool alone), cmd/search, cmd/sqlite and cmd/bleve it prints the
# size of the binary as `go build` makes it, and the non-standard packages
# and modules it links.
set -euo pipefail
cd "$(dirname "$0")"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-8s %10s %9s %8s\n' program bytes packages modules
for p in base search sqlite bleve; do
	go build -o "$out/$p" "./cmd/$p"
	size=$(stat -c %s "$out/$p")
	pkgs=$(go list -deps -f '{{if not .Standard}}{{.ImportPath}}{{end}}' "./cmd/$p" | grep -c .)
	mods=$(go list -deps -f '{{if not .Standard}}{{with .Module}}{{.Path}}{{end}}{{end}}' "./cmd/$p" | sort -u | grep -c .)
	printf '%-8s %10s %9s %8s\n' "$p" "$size" "$pkgs" "$mods"
done
