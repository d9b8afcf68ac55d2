package diff

// What the external tests (package diff_test) read of this package's
// test helpers.
var (
	WalkAll             = walkAll
	ContendedGoProfiles = contendedGoProfiles
	RecordNativeWaits   = recordNativeWaits
	RawFile             = rawFile
)
