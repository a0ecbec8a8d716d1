#!/usr/bin/env bash
# integration/chromium.sh: install headless Chromium (the Debian package chromium) for the web console's
# browser test (web/browser_test.go), unless a Chromium is already on PATH, and print the path of the binary.
#
#   bash integration/chromium.sh          install if missing; prints e.g. /usr/bin/chromium
#
# The test finds the binary through $CLOUDMEM_CHROMIUM (integration/run-tests.sh sets it from this script's
# output) or on PATH; with CI or CLOUDMEM_INTEGRATION set, a missing browser fails the test.
set -euo pipefail

find_chromium() {
	local b
	for b in chromium chromium-browser google-chrome; do
		if command -v "$b" >/dev/null 2>&1; then
			command -v "$b"
			return 0
		fi
	done
	return 1
}

if find_chromium; then
	exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "chromium.sh: no chromium on PATH and no apt-get to install it" >&2
	exit 1
fi
if [[ $EUID -eq 0 ]]; then sudo=(); else sudo=(sudo); fi
echo "chromium.sh: installing chromium (apt-get)" >&2
"${sudo[@]}" bash -c 'apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium fonts-dejavu-core >&2'
find_chromium
