#!/usr/bin/env bash
# bench/run.sh: the whole benchmark in one command, as docs/benchmarks.md was made:
#
#   bash bench/run.sh [FLAG...]
#
# It starts the storage servers the way the integration tests do (integration/emulators.sh up: MinIO,
# fake-gcs-server, Azurite and Redis on 127.0.0.1, installing what is missing), loads their settings,
# and runs `go run . -out ../docs` in bench/ (a module of its own), which measures every backend and writes docs/benchmarks.md,
# docs/benchmarks.csv and docs/benchmarks.png. It takes about half an hour on 2 CPUs. Servers it
# started are stopped on exit; servers that were all running already are left running.
#
# FLAGs go to the benchmark, for example `-backends mem,file,redis` or `-out /tmp/bench`
# (cd bench && go run . -help lists them). Exit status: the benchmark's (1 when a measurement failed, a
# command made more storage calls than the call table allows, or the contention test lost an edit).
set -euo pipefail
cd "$(dirname "$0")/.."

stop_emulators=0
finish() {
	if ((stop_emulators)); then
		bash integration/emulators.sh down || true
	fi
}
trap finish EXIT

if ! bash integration/emulators.sh status >/dev/null 2>&1; then
	stop_emulators=1
fi
bash integration/emulators.sh up
eval "$(bash integration/emulators.sh env)"

# The servers' versions, for the report: the pinned ones from the emulators script, and Redis's own.
setting() { sed -n "s/^$1=//p" integration/emulators.sh; }
redis_version=$(redis-server --version 2>/dev/null | sed -n 's/.* v=\([^ ]*\).*/\1/p')
servers="MinIO $(setting MINIO_VERSION), fake-gcs-server $(setting FAKE_GCS_VERSION) (memory backend),"
servers+=" Azurite $(setting AZURITE_VERSION), Redis ${redis_version:-unknown}; all on this machine, over loopback"

(cd bench && go run . -out ../docs -servers "$servers" "$@")
