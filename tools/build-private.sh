#!/usr/bin/env bash
# Builds diffdiff with extra compiler settings into a private library, from a
# copy of the sources (the working tree's src/ is never touched, so a build
# here and one in the tree can run at the same time).
# Usage: tools/build-private.sh WORK 'MAKEVARS LINES'   -> WORK/lib, WORK/install.log
set -u
work=$1; makevars=$2
root="$(cd "$(dirname "$0")/.." && pwd)"
rm -rf "$work"; mkdir -p "$work/lib" "$work/pkg"
printf '%b\n' "$makevars" > "$work/Makevars"
(cd "$root" && git ls-files -co --exclude-standard DESCRIPTION NAMESPACE R src inst | tar -cf - -T -) | tar -xf - -C "$work/pkg"
rm -f "$work"/pkg/src/*.o "$work"/pkg/src/*.so
R_MAKEVARS_USER="$work/Makevars" R CMD INSTALL --preclean --no-test-load -l "$work/lib" "$work/pkg" \
  > "$work/install.log" 2>&1 || { tail -40 "$work/install.log"; exit 1; }
