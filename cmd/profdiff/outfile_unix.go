//go:build unix

package main

import "syscall"

// noFollow makes createOutput fail on a symbolic link.
const noFollow = syscall.O_NOFOLLOW
