#!/bin/sh
# Processes a Gecko profile (IN, by default the recording
# ../headless.json.gz) with the Firefox Profiler's own code
# (firefox-devtools/profiler) into OUT (gzipped JSON); see README.md.
# usage: make.sh PROFILER-CHECKOUT OUT [IN]
set -eu
if [ $# -ne 2 ] && [ $# -ne 3 ]; then
	echo "usage: $0 PROFILER-CHECKOUT OUT [IN]" >&2
	exit 2
fi
profiler=$(cd "$1" && pwd)
out=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
here=$(cd "$(dirname "$0")" && pwd)
in=$here/../headless.json.gz
if [ $# -eq 3 ]; then
	in=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ln -s "$profiler/src" "$profiler/res" "$work/"
cp "$here/process.ts" "$work/"
cd "$work"
# The npm packages the processing code imports, at the versions of the
# checkout's yarn.lock (each where its package.json lists it); json-slabs,
# which the registry does not serve and which processing JSON does not
# use, is a stub.
echo '{"private": true}' >package.json
pkgs=$(node -e '
const fs = require("fs"), dir = process.argv[1]
const pkg = JSON.parse(fs.readFileSync(dir + "/package.json", "utf8"))
const lock = fs.readFileSync(dir + "/yarn.lock", "utf8").split("\n")
const deps = {...pkg.devDependencies, ...pkg.dependencies}
const out = []
for (const name of process.argv.slice(2)) {
  const range = deps[name]
  if (!range) continue
  const i = lock.findIndex(l => !l.startsWith(" ") && l.split(/,\s*/).some(h => h.replace(/[":]/g, "") === `${name}@${range}`))
  if (i < 0) throw new Error(`${name}@${range} is not in yarn.lock`)
  out.push(`${name}@${/version "(.*)"/.exec(lock[i + 1])[1]}`)
}
console.log(out.join(" "))
' "$profiler" @streamparser/json common-tags memoize-immutable namedtuplemap mixedtuplemap \
	escape-string-regexp devtools-reps protobufjs long react commander smol-toml valibot)
echo "npm packages: $pkgs"
# shellcheck disable=SC2086 # one word per package
npm install --no-audit --no-fund --ignore-scripts --loglevel=error $pkgs
mkdir -p node_modules/json-slabs
cp "$here/json-slabs.js" node_modules/json-slabs/index.js
# The profiler's own build of its node tools (scripts/build-node-tools.mjs,
# nodeBaseConfig) is esbuild with these settings: platform node, cjs, the
# firefox-profiler alias; esbuild only strips the TypeScript and bundles.
# Where the checkout has the profiler-edit tool, it processes the file as
# `profiler-edit -i IN -o OUT`; an older checkout has none, and
# process.ts does what it does by default.
if [ -f src/node-tools/profiler-edit.ts ]; then
	entry=src/node-tools/profiler-edit.ts
else
	entry=process.ts
fi
go run github.com/evanw/esbuild/cmd/esbuild@v0.28.2 "$entry" \
	--bundle --platform=node --format=cjs --target=node16 --preserve-symlinks \
	--alias:firefox-profiler=./src --alias:firefox-profiler-res=./res \
	--loader:.png=file --loader:.jpg=file --loader:.svg=dataurl \
	--log-level=error --outfile=tool.js
if [ "$entry" = process.ts ]; then
	node tool.js "$in" processed.json
else
	node tool.js -i "$in" -o processed.json
fi
gzip -9n <processed.json >"$out"
