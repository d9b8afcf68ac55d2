// Package rules is the first stage of profdiff's engine: the buckets a
// sample's time can fall in (cpu, wait, lock-contention, gc, io, syscall:
// the names are part of the interface) and the rule tables that match
// frame names to them, per runtime.
//
// A rule file has one rule a line: runtime, bucket, strength with its
// modifiers, a regular expression over the normalized frame name, and a
// note (Parse says the columns). The built-in packs are the *.rules files
// beside this one, embedded (Default, in PackOrder); a user's rules go
// ahead of them (Set.WithUserRules). Match returns the first rule that
// matches a name and applies to a profile's kind, memoized per name and
// kind, behind a pre-filter of the literals every pattern needs;
// MatchScript does the same for a script's frame (a JavaScript, Python
// or Ruby function), passing over the rules marked native, which name C
// library and kernel functions.
//
// What a rule means for a whole stack (the nearest strong frame decides,
// weak frames only when no strong one does, context frames last, skip
// frames never) is the classifier's, package diff.
package rules
