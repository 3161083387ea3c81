package collision

// ScaleF32 is a hand-written type that the generated kernel type would clash with.
type ScaleF32 struct{}

// Load clashes with the generated Load.
func Load() {}

// Validate is generated on Config; declaring it here clashes too.
func (Config) Validate() error { return nil }
