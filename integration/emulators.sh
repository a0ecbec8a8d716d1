#!/usr/bin/env bash
# integration/emulators.sh: install (if missing), start, check and stop the four storage servers that the
# integration tests run against, natively, without Docker (see "The suites" in docs/design.md):
#
#   redis      Redis, from the Debian package redis-server
#   minio      MinIO (S3), built with go install
#   fake-gcs   fake-gcs-server (Google Cloud Storage), built with go install
#   azurite    Azurite (Azure Blob Storage), from npm, installed into integration/.tools
#
# Usage:
#   integration/emulators.sh up [SERVER...]       install what is missing, start, wait until each answers,
#                                                 create the test bucket/container; a server that already
#                                                 runs is left alone, so running it twice is harmless
#   integration/emulators.sh down [SERVER...]     stop the servers this script started (and nothing else)
#   integration/emulators.sh status [SERVER...]   one line per server; exits 3 if any of them is not answering
#   integration/emulators.sh env                  print the export lines the tests read:
#                                                 eval "$(integration/emulators.sh env)"
# Without SERVER names a command acts on all four. Progress messages go to stderr, so the output of `env`
# stays clean.
#
# Environment:
#   CLOUDMEM_EMULATORS_DIR   state: data dirs, logs (redis.log, minio.log, ...), pid files
#                            (default ${TMPDIR:-/tmp}/cloudmem-emulators)
#   CLOUDMEM_TOOLS           where go install puts minio and fake-gcs-server (default $HOME/.cache/cloudmem/bin)
#   CLOUDMEM_EMULATORS_WAIT  seconds to wait for a started server to answer (default 60)
#
# docker-compose.yml runs the same servers in containers; integration/harness_test.go checks that it agrees
# with the SETTINGS block below.
set -euo pipefail

# BEGIN SETTINGS ------------------------------------------------------------------------------------------
# Plain NAME=value lines only (no spaces around =, no expansions): harness_test.go reads this block and
# compares it with docker-compose.yml. Change both together.
SERVERS="redis minio fake-gcs azurite"
HOST=127.0.0.1
# PORT_<SERVER> is the server's main port; PORT_<SERVER>_<WHAT> are its other ports.
PORT_REDIS=6379
PORT_MINIO=9000
PORT_MINIO_CONSOLE=9001
PORT_FAKE_GCS=4443
PORT_AZURITE=10000
# The bucket (GCS, S3) and container (Azure) every test uses.
BUCKET=cloudmem-test
MINIO_ROOT_USER=minioadmin
MINIO_ROOT_PASSWORD=minioadmin
S3_REGION=us-east-1
MINIO_MODULE=github.com/minio/minio
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
FAKE_GCS_MODULE=github.com/fsouza/fake-gcs-server
FAKE_GCS_VERSION=1.56.1
AZURITE_VERSION=3.37.0
# Azurite's well-known development account (public, documented; not a secret).
AZURE_ACCOUNT=devstoreaccount1
AZURE_KEY=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==
# END SETTINGS --------------------------------------------------------------------------------------------

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
STATE_DIR=${CLOUDMEM_EMULATORS_DIR:-${TMPDIR:-/tmp}/cloudmem-emulators}
TOOLS_BIN=${CLOUDMEM_TOOLS:-$HOME/.cache/cloudmem/bin}
NODE_PREFIX=$SCRIPT_DIR/.tools # npm installs Azurite here (git-ignored)
WAIT_SECONDS=${CLOUDMEM_EMULATORS_WAIT:-60}
# How long to wait for somebody else's `go install` of the same tool (a cold MinIO build takes ~7 minutes).
BUILD_WAIT_SECONDS=1800

# ---- small helpers ---------------------------------------------------------------------------------------

say() { printf 'emulators: %s\n' "$*" >&2; }
die() {
	say "error: $*"
	exit 1
}

pid_file() { printf '%s/%s.pid\n' "$STATE_DIR" "$1"; }
log_file() { printf '%s/%s.log\n' "$STATE_DIR" "$1"; }
data_dir() { printf '%s/%s-data\n' "$STATE_DIR" "$1"; }

# main_port SERVER: the port tests connect to.
main_port() {
	case $1 in
	redis) echo "$PORT_REDIS" ;;
	minio) echo "$PORT_MINIO" ;;
	fake-gcs) echo "$PORT_FAKE_GCS" ;;
	azurite) echo "$PORT_AZURITE" ;;
	esac
}

# alive PID: the process exists and is not a zombie (a server that died while this script, its parent, still
# runs stays a zombie until we exit, and kill -0 succeeds on zombies).
alive() {
	local state
	state=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
	[[ $state != Z* ]]
}

# recorded_pid SERVER: print the PID this script recorded for SERVER, if that process is alive and its command
# line still names the server (so a PID recycled by an unrelated process is never taken for ours).
recorded_pid() {
	local file pid cmdline pattern
	file=$(pid_file "$1")
	[[ -f $file ]] || return 1
	pid=$(<"$file")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	alive "$pid" || return 1
	cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
	case $1 in
	redis) pattern=redis-server ;;
	minio) pattern=minio ;;
	fake-gcs) pattern=fake-gcs-server ;;
	azurite) pattern=azurite-blob ;;
	esac
	[[ $cmdline == *"$pattern"* ]] || return 1
	printf '%s\n' "$pid"
}

# healthy SERVER: does the server answer on its port right now?
healthy() {
	case $1 in
	redis)
		# PING over bash's /dev/tcp, so this works before redis-cli is installed. ($1 and $2 are the inner
		# shell's arguments, hence the single quotes.)
		local reply
		# shellcheck disable=SC2016
		reply=$(timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2" && printf "PING\r\n" >&3 && head -c 7 <&3' \
			_ "$HOST" "$PORT_REDIS" 2>/dev/null) || return 1
		[[ $reply == +PONG* ]]
		;;
	minio) curl -fsS -o /dev/null --max-time 2 "http://$HOST:$PORT_MINIO/minio/health/live" 2>/dev/null ;;
	fake-gcs) curl -fsS -o /dev/null --max-time 2 "http://$HOST:$PORT_FAKE_GCS/storage/v1/b" 2>/dev/null ;;
	azurite)
		# Any HTTP answer will do (an unsigned request gets 403); 000 means nothing answered.
		local code
		code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 2 \
			"http://$HOST:$PORT_AZURITE/$AZURE_ACCOUNT?comp=list" 2>/dev/null) || true
		[[ -n $code && $code != 000 ]]
		;;
	esac
}

# show_log_tail SERVER|FILE: print the end of a log to stderr, to explain a failure. Server logs are appended
# to across runs, so only the part after the last "=== ... started" marker (see launch) is shown.
show_log_tail() {
	local log=$1
	[[ -f $log ]] || log=$(log_file "$1")
	say "last lines of $log:"
	awk '/^=== .* started by emulators.sh/ { n = 0 } { line[n++] = $0 } END { for (i = (n > 30 ? n - 30 : 0); i < n; i++) print line[i] }' \
		"$log" >&2 2>/dev/null || true
}

# run_logged LOG CMD...: run an install command with its (long) output in LOG; on failure show the tail and exit.
run_logged() {
	local log=$1
	shift
	if ! "$@" >"$log" 2>&1; then
		say "failed: $*"
		show_log_tail "$log"
		exit 1
	fi
}

# as_root CMD...: apt-get needs root; use sudo when we are not.
as_root() {
	if [[ $EUID -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

# ---- installing ------------------------------------------------------------------------------------------

# go_build_running MODULE: is a `go install MODULE@...` already running (e.g. a warm-up job filling the cache)?
go_build_running() {
	pgrep -f "(^|/)go install $1@" >/dev/null
}

# install_go_tool BINARY MODULE VERSION: go install MODULE@VERSION into $TOOLS_BIN unless BINARY is there.
install_go_tool() {
	local bin=$1 module=$2 version=$3 deadline
	[[ -x $TOOLS_BIN/$bin ]] && return 0
	command -v go >/dev/null || die "$bin: not in $TOOLS_BIN and no go toolchain to build it"
	# Another process may be building this very binary (possibly into $TOOLS_BIN): wait for it rather than
	# compete with it for the two cores, then look again. Wait for that build to end, not for the file to
	# appear: go install may copy the binary into place, so it can exist before it is complete.
	if go_build_running "$module"; then
		say "$bin: a 'go install $module' is already running; waiting for it (up to ${BUILD_WAIT_SECONDS}s)"
		deadline=$((SECONDS + BUILD_WAIT_SECONDS))
		while go_build_running "$module" && ((SECONDS < deadline)); do
			sleep 2
		done
		[[ -x $TOOLS_BIN/$bin ]] && return 0
	fi
	say "$bin: building $module@$version into $TOOLS_BIN (first time only; MinIO takes ~7 minutes on 2 cores)"
	mkdir -p "$TOOLS_BIN"
	run_logged "$STATE_DIR/install-$bin.log" env GOBIN="$TOOLS_BIN" go install "$module@$version"
	[[ -x $TOOLS_BIN/$bin ]] || die "$bin: go install finished but $TOOLS_BIN/$bin is missing (is GOBIN overridden?)"
}

install_redis() {
	command -v redis-server >/dev/null && return 0
	say "redis: installing the Debian package redis-server"
	run_logged "$STATE_DIR/install-redis.log" as_root env DEBIAN_FRONTEND=noninteractive \
		bash -c 'apt-get update && apt-get install -y redis-server'
}

install_azurite() {
	local pkg=$NODE_PREFIX/node_modules/azurite/package.json installed=""
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		die "azurite: needs node and npm on PATH"
	fi
	if [[ -f $pkg ]]; then
		installed=$(node -p 'require(process.argv[1]).version' "$pkg")
	fi
	[[ $installed == "$AZURITE_VERSION" && -x $NODE_PREFIX/node_modules/.bin/azurite-blob ]] && return 0
	say "azurite: installing npm package azurite@$AZURITE_VERSION into $NODE_PREFIX (found: ${installed:-none})"
	mkdir -p "$NODE_PREFIX"
	run_logged "$STATE_DIR/install-azurite.log" \
		npm install --prefix "$NODE_PREFIX" --no-audit --no-fund "azurite@$AZURITE_VERSION"
}

install_server() {
	case $1 in
	redis) install_redis ;;
	minio) install_go_tool minio "$MINIO_MODULE" "$MINIO_VERSION" ;;
	fake-gcs) install_go_tool fake-gcs-server "$FAKE_GCS_MODULE" "v$FAKE_GCS_VERSION" ;;
	azurite) install_azurite ;;
	esac
}

# ---- starting and stopping -------------------------------------------------------------------------------

# launch SERVER CMD...: run CMD in the background, detached, with its output appended to the server's log, and
# record its PID. setsid makes it the leader of a new session and process group (PID = process group id), so
# it survives this script and the terminal, ignores Ctrl-C aimed at us, and `down` can signal the whole group.
# (setsid only forks when its caller leads a process group, which a background job of a script never does, so
# $! is the server's own PID.) 9>&- : do not hand the server our lock (see main).
launch() {
	local name=$1 log
	shift
	log=$(log_file "$name")
	printf '\n=== %s started by emulators.sh: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >>"$log"
	setsid "$@" >>"$log" 2>&1 </dev/null 9>&- &
	printf '%s\n' "$!" >"$(pid_file "$name")"
	say "$name: started, pid $! (log: $log)"
}

start_server() {
	local name=$1 data
	data=$(data_dir "$name")
	mkdir -p "$data"
	case $name in
	redis)
		launch redis redis-server --port "$PORT_REDIS" --bind "$HOST" --save "" --appendonly no \
			--daemonize no --dir "$data"
		;;
	minio)
		launch minio env MINIO_ROOT_USER="$MINIO_ROOT_USER" MINIO_ROOT_PASSWORD="$MINIO_ROOT_PASSWORD" \
			"$TOOLS_BIN/minio" server "$data" --address "$HOST:$PORT_MINIO" --console-address "$HOST:$PORT_MINIO_CONSOLE"
		;;
	fake-gcs)
		# -public-host must be the address clients use, or object reads (which go to the public host) fail.
		# The memory backend keeps nothing on disk; the data dir only stays for symmetry.
		launch fake-gcs "$TOOLS_BIN/fake-gcs-server" -scheme http -host "$HOST" -port "$PORT_FAKE_GCS" \
			-backend memory -public-host "$HOST:$PORT_FAKE_GCS"
		;;
	azurite)
		# --skipApiVersionCheck: the Go SDK sends a newer API version than Azurite knows.
		# --loose: ignore headers Azurite does not support instead of failing the request.
		launch azurite "$NODE_PREFIX/node_modules/.bin/azurite-blob" --blobHost "$HOST" --blobPort "$PORT_AZURITE" \
			--location "$data" --skipApiVersionCheck --disableTelemetry --loose
		;;
	esac
}

# wait_healthy SERVER [PID]: wait until SERVER answers; fail early if PID dies; show its log and exit on failure.
wait_healthy() {
	local name=$1 pid=${2:-} deadline=$((SECONDS + WAIT_SECONDS))
	until healthy "$name"; do
		if [[ -n $pid ]] && ! alive "$pid"; then
			say "$name: exited before answering on $HOST:$(main_port "$name")"
			rm -f "$(pid_file "$name")"
			show_log_tail "$name"
			exit 1
		fi
		if ((SECONDS >= deadline)); then
			say "$name: no answer on $HOST:$(main_port "$name") within ${WAIT_SECONDS}s"
			show_log_tail "$name"
			exit 1
		fi
		sleep 0.5
	done
}

# create_bucket SERVER: create $BUCKET on it; "already exists" counts as success, so this is safe to repeat.
create_bucket() {
	local name=$1 code body
	body=$STATE_DIR/$name-bucket.response
	case $name in
	redis) return 0 ;; # no buckets in Redis
	minio)
		# No mc client: curl signs the S3 CreateBucket request with AWS Signature V4 itself.
		code=$(curl -sS -o "$body" -w '%{http_code}' --max-time 10 \
			--aws-sigv4 "aws:amz:$S3_REGION:s3" --user "$MINIO_ROOT_USER:$MINIO_ROOT_PASSWORD" \
			-X PUT "http://$HOST:$PORT_MINIO/$BUCKET") || code=000
		[[ $code == 200 ]] || { [[ $code == 409 ]] && grep -q BucketAlreadyOwnedByYou "$body"; } ||
			die "minio: creating bucket $BUCKET: HTTP $code: $(cat "$body" 2>/dev/null)"
		;;
	fake-gcs)
		code=$(curl -sS -o "$body" -w '%{http_code}' --max-time 10 -X POST \
			-H 'Content-Type: application/json' -d "{\"name\":\"$BUCKET\"}" \
			"http://$HOST:$PORT_FAKE_GCS/storage/v1/b") || code=000
		[[ $code == 200 || $code == 409 ]] ||
			die "fake-gcs: creating bucket $BUCKET: HTTP $code: $(cat "$body" 2>/dev/null)"
		;;
	azurite)
		# Azure wants Shared Key signed requests; the helper signs them with Node's built-in crypto.
		AZURITE_BLOB_ENDPOINT="http://$HOST:$PORT_AZURITE/$AZURE_ACCOUNT" AZURE_STORAGE_ACCOUNT=$AZURE_ACCOUNT \
			AZURE_STORAGE_KEY=$AZURE_KEY node "$SCRIPT_DIR/azurite-container.js" create "$BUCKET" >"$body" 2>&1 ||
			die "azurite: creating container $BUCKET: $(cat "$body")"
		;;
	esac
	rm -f "$body"
	say "$name: bucket $BUCKET ready"
}

up_one() {
	local name=$1 pid
	if pid=$(recorded_pid "$name"); then
		say "$name: already running, pid $pid"
		wait_healthy "$name" "$pid"
	elif healthy "$name"; then
		# Not ours (another checkout, a system service, docker compose...): use it, but never stop it.
		say "$name: something already answers on $HOST:$(main_port "$name"); using it (not started here, so 'down' leaves it alone)"
		rm -f "$(pid_file "$name")"
	else
		rm -f "$(pid_file "$name")" # stale: the process it named is gone
		install_server "$name"
		start_server "$name"
		wait_healthy "$name" "$(<"$(pid_file "$name")")"
	fi
	create_bucket "$name"
}

# group_alive PGID: does any process of the group still run? Zombies do not count: the init process of some
# machines reaps orphans only every second or so, and a zombie holds no port.
group_alive() {
	local p
	for p in $(pgrep -g "$1"); do
		alive "$p" && return 0
	done
	return 1
}

# stop_pid PID: stop the process group PID leads (or just PID if it leads none), politely, then by force.
stop_pid() {
	local pid=$1 target=$1 pgid i
	pgid=$(ps -o pgid= -p "$pid" 2>/dev/null | tr -d ' ') || true
	[[ $pgid == "$pid" ]] && target=-$pid
	kill -TERM -- "$target" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do # up to 10 s
		if [[ $target == -* ]]; then
			group_alive "$pid" || return 0
		else
			alive "$pid" || return 0
		fi
		sleep 0.1
	done
	say "pid $pid did not stop within 10s; sending SIGKILL"
	kill -KILL -- "$target" 2>/dev/null || true
}

down_one() {
	local name=$1 pid file
	file=$(pid_file "$name")
	if pid=$(recorded_pid "$name"); then
		say "$name: stopping pid $pid"
		stop_pid "$pid"
		rm -f "$file"
	else
		if [[ -f $file ]]; then
			say "$name: removing stale pid file (process gone)"
			rm -f "$file"
		fi
		if healthy "$name"; then
			say "$name: answers on $HOST:$(main_port "$name") but was not started here; left alone"
		else
			say "$name: not running"
		fi
	fi
}

# status_one SERVER: print one line; return 1 if the server does not answer.
status_one() {
	local name=$1 pid addr state=stopped who="" rc=1
	addr="$HOST:$(main_port "$name")"
	if healthy "$name"; then
		state=running
		rc=0
	fi
	if pid=$(recorded_pid "$name"); then
		who="pid $pid"
	elif [[ $state == running ]]; then
		who="not started by emulators.sh"
	fi
	printf '%-9s %-8s %-22s %s\n' "$name" "$state" "$addr" "$who"
	return "$rc"
}

print_env() {
	local conn
	conn="DefaultEndpointsProtocol=http;AccountName=$AZURE_ACCOUNT;AccountKey=$AZURE_KEY;BlobEndpoint=http://$HOST:$PORT_AZURITE/$AZURE_ACCOUNT;"
	# Single quotes: the Azure connection string contains ';'. No value contains a single quote.
	printf "export %s='%s'\n" \
		CLOUDMEM_TEST_S3_ENDPOINT "http://$HOST:$PORT_MINIO" \
		AWS_ACCESS_KEY_ID "$MINIO_ROOT_USER" \
		AWS_SECRET_ACCESS_KEY "$MINIO_ROOT_PASSWORD" \
		AWS_REGION "$S3_REGION" \
		STORAGE_EMULATOR_HOST "$HOST:$PORT_FAKE_GCS" \
		CLOUDMEM_TEST_AZURE_CONNECTION_STRING "$conn" \
		CLOUDMEM_TEST_REDIS_ADDR "$HOST:$PORT_REDIS" \
		CLOUDMEM_TEST_BUCKET "$BUCKET"
}

usage() {
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
	exit 2
}

main() {
	local command=${1:-} name rc=0
	[[ -n $command ]] || usage
	shift
	local -a selected=("$@")
	# shellcheck disable=SC2206 # SERVERS is a plain space-separated list of names
	((${#selected[@]})) || selected=($SERVERS)
	for name in "${selected[@]}"; do
		[[ " $SERVERS " == *" $name "* ]] || die "unknown server '$name' (known: $SERVERS)"
	done

	case $command in
	up | down)
		mkdir -p "$STATE_DIR"
		# One up/down at a time on this machine (several people may share it): hold a lock on the state dir.
		exec 9>"$STATE_DIR/lock"
		if ! flock -n 9; then
			say "another emulators.sh up/down is running; waiting for it"
			flock 9
		fi
		for name in "${selected[@]}"; do "${command}_one" "$name"; done
		;;
	status)
		for name in "${selected[@]}"; do status_one "$name" || rc=3; done
		return "$rc"
		;;
	env) print_env ;;
	*) usage ;;
	esac
}

main "$@"
