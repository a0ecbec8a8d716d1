package memory

// Names that tests of package memory_test reach into: the keys of the
// Handler's own bookkeeping, and a way to drop its file count.

const (
	FileCountKey = fileCountKey
	WitnessDir   = witnessRoot
)

// IsWitness is isWitness.
func IsWitness(key string) bool { return isWitness(key) }
