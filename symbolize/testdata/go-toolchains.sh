#!/bin/sh
# Runs TestGoInlineToolchains with Go 1.13, 1.14, 1.15, 1.16, 1.18 and 1.20
# (each pclntab layout whose inline tree is read) fetched from the module
# proxy as golang.org/toolchain modules (about 100 MB each, kept in the
# module cache). Run from the symbolize folder: sh testdata/go-toolchains.sh
set -e
gos=
for v in 1.13.15 1.14.15 1.15.15 1.16.15 1.18.10 1.20.14; do
	dir=$(GOFLAGS=-modcacherw go mod download -json "golang.org/toolchain@v0.0.1-go$v.linux-amd64" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	# the module's zip does not keep the executable bits
	chmod +x "$dir"/bin/* "$dir"/pkg/tool/*/*
	gos="$gos $dir/bin/go"
done
PROFDIFF_GO_TOOLCHAINS="$gos" go test -count=1 -run TestGoInlineToolchains -v .
