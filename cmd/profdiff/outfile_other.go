//go:build !unix

package main

// noFollow is 0 where the platform has no O_NOFOLLOW: checkOutput's look
// is the only guard.
const noFollow = 0
