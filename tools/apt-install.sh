#!/usr/bin/env bash
# Installs the Debian packages given that are not installed yet (one apt-get
# call; sudo when not root). Used by install-deps.sh and install-honestdid.sh.
# Usage: tools/apt-install.sh TAG pkg...   (TAG prefixes the message)
set -euo pipefail
tag="$1"; shift
missing=""
for p in "$@"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
if [ -n "$missing" ]; then
  echo "$tag: apt-get install$missing"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
