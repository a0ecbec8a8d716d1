#!/usr/bin/env bash
# integration/hydra.sh: build Ory Hydra, the OAuth 2.1 authorization server the OAuth tests of
# integration/oauth_test.go run against, and print the path of its binary:
#
#   export CLOUDMEM_HYDRA=$(bash integration/hydra.sh)
#
# Hydra is a tool of the module in integration/hydra (go.mod pins github.com/ory/hydra/v2 v2.3.0 and the
# replace of its own go.mod, which a tool's module must repeat). It is built once, with SQLite (which its
# in-memory database, DSN=memory, needs: cgo, so a C compiler), into $CLOUDMEM_TOOLS (default
# $HOME/.cache/cloudmem/bin) as hydra-v2.3.0; later runs print the path at once. The cold build takes about
# 4 to 8 minutes on 2 cores (docs/mcp.md). The tests start and stop Hydra themselves, on 127.0.0.1, with its
# telemetry off.
#
# Progress goes to stderr and the build's output to $TOOLS_BIN/hydra-build.log, so stdout is the path alone.
set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
TOOLS_BIN=${CLOUDMEM_TOOLS:-$HOME/.cache/cloudmem/bin}
VERSION=$(cd "$SCRIPT_DIR/hydra" && go list -m -f '{{.Version}}' github.com/ory/hydra/v2)
BIN=$TOOLS_BIN/hydra-$VERSION

if [[ ! -x $BIN ]]; then
	mkdir -p "$TOOLS_BIN"
	printf 'hydra: building github.com/ory/hydra/v2@%s into %s (first time only)\n' "$VERSION" "$BIN" >&2
	if [[ $(go env CGO_ENABLED) != 1 ]]; then
		printf 'hydra: error: the build needs cgo (SQLite): install a C compiler (apt-get install gcc libc6-dev)\n' >&2
		exit 1
	fi
	start=$SECONDS
	# Into a temporary name first: a build that fails or is stopped leaves no binary that looks complete.
	if ! (cd "$SCRIPT_DIR/hydra" && go build -tags sqlite -o "$BIN.tmp" github.com/ory/hydra/v2) \
		>"$TOOLS_BIN/hydra-build.log" 2>&1; then
		printf 'hydra: error: the build failed:\n' >&2
		tail -n 20 "$TOOLS_BIN/hydra-build.log" >&2
		rm -f "$BIN.tmp"
		exit 1
	fi
	mv "$BIN.tmp" "$BIN"
	printf 'hydra: built in %d s\n' $((SECONDS - start)) >&2
fi
printf '%s\n' "$BIN"
