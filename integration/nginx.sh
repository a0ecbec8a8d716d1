#!/usr/bin/env bash
# integration/nginx.sh: install nginx (Debian's package) if it is missing, and print the path of its binary:
#
#   export CLOUDMEM_NGINX=$(bash integration/nginx.sh)
#
# The replica tests (integration/replicas_test.go) start nginx themselves, with a configuration of their own in
# a temporary directory, on loopback ports, and stop it. The package's own service is not started (nothing the
# tests need listens on port 80).
set -euo pipefail

if ! command -v nginx >/dev/null && [[ ! -x /usr/sbin/nginx ]]; then
	printf 'nginx: installing the Debian package nginx\n' >&2
	if [[ $EUID -eq 0 ]]; then sudo=(); else sudo=(sudo); fi
	# policy-rc.d 101: the package's scripts do not start its service.
	"${sudo[@]}" bash -c 'policy=/usr/sbin/policy-rc.d; made=0
		if [[ ! -e $policy ]]; then printf "#!/bin/sh\nexit 101\n" >"$policy" && chmod +x "$policy" && made=1; fi
		apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y nginx >/dev/null; rc=$?
		if ((made)); then rm -f "$policy"; fi
		exit $rc' >&2
fi
command -v nginx 2>/dev/null || printf '/usr/sbin/nginx\n'
