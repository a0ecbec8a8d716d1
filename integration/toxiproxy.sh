#!/usr/bin/env bash
# integration/toxiproxy.sh: build, start, check and stop Toxiproxy, the TCP proxy the network fault tests
# (integration/toxiproxy_test.go) and the long fault run (bench, -faults) put between cloudmem and each
# storage server to inject latency, resets, blackholes, slow bandwidth and slicing:
#
#   integration/toxiproxy.sh up       build the server if needed, start it on 127.0.0.1:PORT, wait until its
#                                     API answers; one that already answers there is left alone
#   integration/toxiproxy.sh down     stop the server this script started (by the PID it recorded), nothing else
#   integration/toxiproxy.sh status   one line; exits 3 if the API does not answer
#   integration/toxiproxy.sh env      print the line the tests read: eval "$(integration/toxiproxy.sh env)"
#   integration/toxiproxy.sh path     build the server if needed and print the path of its binary
#
# toxiproxy-server is a tool of the module in integration/toxiproxy (go.mod pins
# github.com/Shopify/toxiproxy/v2 v2.5.0). It is built once into $CLOUDMEM_TOOLS (default
# $HOME/.cache/cloudmem/bin) as toxiproxy-server-v2.5.0, in about a minute; later runs use that binary. The
# tests create their proxies through its HTTP API, each on a port of its own, and delete them.
#
# Environment:
#   CLOUDMEM_TOXIPROXY_PORT   the API's port (default 8474)
#   CLOUDMEM_EMULATORS_DIR    where the pid file and the log go (default ${TMPDIR:-/tmp}/cloudmem-emulators),
#                             shared with integration/emulators.sh
#   CLOUDMEM_TOOLS            where the binary is cached (default $HOME/.cache/cloudmem/bin)
# Progress goes to stderr, so the output of `env` and `path` stays clean.
set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
TOOLS_BIN=${CLOUDMEM_TOOLS:-$HOME/.cache/cloudmem/bin}
STATE_DIR=${CLOUDMEM_EMULATORS_DIR:-${TMPDIR:-/tmp}/cloudmem-emulators}
HOST=127.0.0.1
PORT=${CLOUDMEM_TOXIPROXY_PORT:-8474}
PID_FILE=$STATE_DIR/toxiproxy.pid
LOG_FILE=$STATE_DIR/toxiproxy.log
WAIT_SECONDS=30

say() { printf 'toxiproxy: %s\n' "$*" >&2; }
die() {
	say "error: $*"
	exit 1
}

# binary: build toxiproxy-server once (into a temporary name first, so a failed or stopped build leaves
# nothing that looks complete) and print its path.
binary() {
	local version bin start
	version=$(cd "$SCRIPT_DIR/toxiproxy" && go list -m -f '{{.Version}}' github.com/Shopify/toxiproxy/v2)
	bin=$TOOLS_BIN/toxiproxy-server-$version
	if [[ ! -x $bin ]]; then
		mkdir -p "$TOOLS_BIN"
		say "building github.com/Shopify/toxiproxy/v2@$version into $bin (first time only)"
		start=$SECONDS
		if ! (cd "$SCRIPT_DIR/toxiproxy" && go build -o "$bin.tmp.$$" github.com/Shopify/toxiproxy/v2/cmd/server) \
			>"$TOOLS_BIN/toxiproxy-build.log" 2>&1; then
			tail -n 20 "$TOOLS_BIN/toxiproxy-build.log" >&2
			rm -f "$bin.tmp.$$"
			die "the build failed (above)"
		fi
		mv "$bin.tmp.$$" "$bin"
		say "built in $((SECONDS - start)) s"
	fi
	printf '%s\n' "$bin"
}

# answers: the API lists its proxies.
answers() { curl -fsS --max-time 2 "http://$HOST:$PORT/proxies" >/dev/null 2>&1; }

# recorded_pid: print the PID this script started, if that process still runs.
recorded_pid() {
	local pid
	[[ -f $PID_FILE ]] || return 1
	pid=$(<"$PID_FILE")
	[[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null && printf '%s\n' "$pid"
}

up() {
	local bin pid waited=0
	if answers; then
		say "already answers on $HOST:$PORT; left alone"
		return
	fi
	bin=$(binary)
	mkdir -p "$STATE_DIR"
	# setsid: the server outlives this script and the shell that ran it, as the emulators do. LOG_LEVEL=warn:
	# at its default it logs every connection, and the long fault run makes many.
	LOG_LEVEL=warn setsid "$bin" -host "$HOST" -port "$PORT" >"$LOG_FILE" 2>&1 </dev/null &
	pid=$!
	printf '%s\n' "$pid" >"$PID_FILE"
	until answers; do
		if ! kill -0 "$pid" 2>/dev/null; then
			tail -n 20 "$LOG_FILE" >&2
			die "the server exited (log above, in $LOG_FILE)"
		fi
		((waited++ < WAIT_SECONDS * 10)) || die "no answer on $HOST:$PORT after $WAIT_SECONDS s (log: $LOG_FILE)"
		sleep 0.1
	done
	say "started on $HOST:$PORT (pid $pid)"
}

down() {
	local pid
	if ! pid=$(recorded_pid); then
		rm -f "$PID_FILE"
		say "not started by this script; nothing to stop"
		return
	fi
	kill "$pid"
	for _ in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	rm -f "$PID_FILE"
	say "stopped (pid $pid)"
}

status() {
	local who="" pid
	if pid=$(recorded_pid); then who="pid $pid"; fi
	if answers; then
		printf '%-9s %-8s %-22s %s\n' toxiproxy running "$HOST:$PORT" "${who:-not started by toxiproxy.sh}"
	else
		printf '%-9s %-8s %-22s %s\n' toxiproxy stopped "$HOST:$PORT" "$who"
		return 3
	fi
}

case ${1:-} in
up) up ;;
down) down ;;
status) status ;;
env) printf "export CLOUDMEM_TOXIPROXY='http://%s:%s'\n" "$HOST" "$PORT" ;;
path) binary ;;
*)
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
