#!/usr/bin/env bash
# integration/run-tests.sh: the whole test run, as CI runs it (.ci/run) and as the README gives it:
#
#   bash integration/run-tests.sh
#
# In order, stopping at the first failure:
#   1. gofmt        every .go file is formatted (lists the ones that are not)
#   2. go vet       go vet ./... (and in bench/)
#   3. go mod tidy  go.mod and go.sum are tidy (go mod tidy -diff shows what would change)
#   4. emulators    integration/emulators.sh up: installs what is missing, then starts Redis, MinIO,
#                   fake-gcs-server and Azurite on 127.0.0.1 (the first run builds MinIO: ~7 minutes)
#   5. chromium     integration/chromium.sh: installs headless Chromium for the web console's browser test
#                   (then Hydra, nginx, and Toxiproxy: integration/toxiproxy.sh up, stopped on exit if started)
#   6. go test      go test -race -count=1 ./..., with the emulators' settings in the environment, then the
#                   same in bench/ (a module of its own)
# and prints a summary. The emulators it started are stopped on exit; servers that were all already
# running before it started are left running.
#
# The integration tests fail, rather than skip, when a server is missing if CI or CLOUDMEM_INTEGRATION
# is set; this script sets CLOUDMEM_INTEGRATION=1, so a run here always covers every backend.
#
# Environment: GO_TEST_FLAGS adds flags to go test (for example GO_TEST_FLAGS='-run TestS3 -v').
# The emulators script reads its own variables (see integration/emulators.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

passed=()        # the steps that passed, for the summary
current=""       # the step running now
stop_emulators=0 # 1 when the trap must stop the emulators
stop_toxiproxy=0 # 1 when the trap must stop Toxiproxy
notes=()         # anything the summary must repeat

step() {
	current=$1
	printf '\n==> %s\n' "$current"
}
ok() { passed+=("$current"); }

finish() {
	local rc=$?
	if ((stop_emulators)); then
		printf '\n==> stopping the emulators\n'
		bash integration/emulators.sh down || true
	fi
	if ((stop_toxiproxy)); then bash integration/toxiproxy.sh down || true; fi
	printf '\n==> summary\n'
	local s
	for s in "${passed[@]}"; do printf 'ok    %s\n' "$s"; done
	for s in "${notes[@]}"; do printf 'note  %s\n' "$s"; done
	if ((rc == 0)); then
		printf 'PASS: every check passed\n'
	else
		printf 'FAIL  %s\n' "$current"
		printf 'FAIL: run-tests.sh stopped at "%s" (exit %d)\n' "$current" "$rc"
	fi
	exit "$rc"
}
trap finish EXIT
# A run that is stopped fails: without these, a signal would end it through
# the EXIT trap with the status of the last command, and it could say PASS.
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

step "gofmt"
unformatted=$(find . \( -path ./.git -o -path ./integration/.tools -o -name testdata \) -prune \
	-o -name '*.go' -print0 | xargs -0 -r gofmt -l)
if [[ -n $unformatted ]]; then
	printf 'these files need gofmt -w:\n%s\n' "$unformatted"
	exit 1
fi
ok

step "go vet"
go vet ./...
# A lean build (docs/build.md) links fewer backends: it must build, tests included.
go vet -tags no_s3,no_gcs,no_azure,no_redis ./cmd/...
# bench is a module of its own (its plotting dependency stays out of the library's go.mod).
(cd bench && go vet ./...)
ok

step "go mod tidy"
if ! go mod tidy -diff; then
	printf 'go.mod/go.sum are not tidy: run go mod tidy and commit the result (the diff is above)\n'
	exit 1
fi
if ! (cd bench && go mod tidy -diff); then
	printf 'bench/go.mod and bench/go.sum are not tidy: run (cd bench && go mod tidy) and commit the result\n'
	exit 1
fi
ok

step "emulators"
if bash integration/emulators.sh status >/dev/null 2>&1; then
	printf 'all four servers already run; leaving them running afterwards\n'
else
	stop_emulators=1
fi
bash integration/emulators.sh up
eval "$(bash integration/emulators.sh env)"
export CLOUDMEM_INTEGRATION=1
ok

# The race detector needs cgo, hence a C compiler; install one the way emulators.sh installs Redis.
race=-race
if [[ $(go env CGO_ENABLED) != 1 ]]; then
	step "C compiler for go test -race"
	if command -v apt-get >/dev/null; then
		if [[ $EUID -eq 0 ]]; then sudo=(); else sudo=(sudo); fi
		"${sudo[@]}" bash -c 'apt-get update && apt-get install -y gcc libc6-dev' || true
	fi
	if [[ $(go env CGO_ENABLED) == 1 ]]; then
		ok
	else
		race=""
		notes+=("no C compiler could be installed: go test ran WITHOUT -race")
		printf 'no C compiler: running go test without -race\n'
	fi
fi

step "chromium"
# The web console's browser test (web/browser_test.go) drives headless Chromium.
CLOUDMEM_CHROMIUM=$(bash integration/chromium.sh)
export CLOUDMEM_CHROMIUM
ok

step "Hydra and nginx"
# The OAuth tests' authorization server (built once, with cgo) and the replica tests' load balancer.
CLOUDMEM_HYDRA=$(bash integration/hydra.sh)
CLOUDMEM_NGINX=$(bash integration/nginx.sh)
export CLOUDMEM_HYDRA CLOUDMEM_NGINX
ok

step "Toxiproxy"
# The network fault tests' proxy server (built once, like Hydra).
bash integration/toxiproxy.sh status >/dev/null 2>&1 || stop_toxiproxy=1
bash integration/toxiproxy.sh up
eval "$(bash integration/toxiproxy.sh env)"
ok

step "go test"
# shellcheck disable=SC2086 # GO_TEST_FLAGS is a list of flags
go test $race -count=1 -timeout 30m ${GO_TEST_FLAGS:-} ./...
# shellcheck disable=SC2086
(cd bench && go test $race -count=1 -timeout 10m ${GO_TEST_FLAGS:-} ./...)
ok
