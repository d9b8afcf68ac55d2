package nettrace

// Synthetic is the package's synthetic trace writer (see synthetic), for
// the fuzz target of the external test package, which imports package
// diff (itself an importer of this package) to check shares.
func Synthetic(compressed bool, pointerSize int) []byte { return synthetic(compressed, pointerSize) }
