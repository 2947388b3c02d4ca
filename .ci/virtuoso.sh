#!/bin/sh
# Install Debian's OpenLink Virtuoso 7 (virtuoso-t, isql-vt) for the tests marked `virtuoso`
# (tests/virtuoso.py starts a private instance per test session). No-op when already present.
set -eu
if command -v virtuoso-t >/dev/null 2>&1 && { command -v isql-vt >/dev/null 2>&1 || command -v isql-v >/dev/null 2>&1; }; then
    echo "virtuoso: $(virtuoso-t -? 2>&1 | sed -n 2p)"
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; else
        echo "virtuoso: not root and no sudo; the virtuoso tests will be skipped" >&2
        exit 0
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends virtuoso-opensource-7-bin >/dev/null
echo "virtuoso: $(virtuoso-t -? 2>&1 | sed -n 2p)"
