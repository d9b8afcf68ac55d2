#!/bin/sh
# Compares profdiff with speedscope's importers, stack by stack.
# usage: run.sh --profdiff BINARY --speedscope CHECKOUT FILE...   (see README.md)
set -eu
profdiff= speedscope=
while [ $# -gt 0 ]; do
	case $1 in
	--profdiff) profdiff=$2; shift 2 ;;
	--speedscope) speedscope=$2; shift 2 ;;
	*) break ;;
	esac
done
if [ -z "$profdiff" ] || [ -z "$speedscope" ] || [ $# -eq 0 ]; then
	echo "usage: $0 --profdiff BINARY --speedscope CHECKOUT FILE..." >&2
	exit 2
fi
profdiff=$(cd "$(dirname "$profdiff")" && pwd)/$(basename "$profdiff")
speedscope=$(cd "$speedscope" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ln -s "$speedscope/src" "$speedscope/package.json" "$work/"
cp "$here"/*.ts "$work/"
# esbuild strips the types and bundles speedscope's importers; the npm
# packages they import are the stubs here, put where a bare import of
# src/ finds them (--preserve-symlinks keeps src/ under $work).
for pkg in pako:pako uint8array-json-parser:json-parser protobufjs:absent long:absent jszip:absent jfrview:absent; do
	mkdir -p "$work/node_modules/${pkg%%:*}"
	cp "$here/stubs/${pkg#*:}.js" "$work/node_modules/${pkg%%:*}/index.js"
done
cp "$here/stubs/absent.js" "$work/node_modules/protobufjs/minimal.js"
: >"$work/node_modules/jfrview/jfrview_bg.wasm"
(cd "$work" && go run github.com/evanw/esbuild/cmd/esbuild@v0.28.2 compare.ts \
	--bundle --platform=node --preserve-symlinks --log-level=warning \
	--loader:.wasm=empty --outfile=compare.js)
node "$work/compare.js" "$profdiff" "$@"
