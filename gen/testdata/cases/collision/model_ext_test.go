package collision_test

// Load in an external test package lives in another namespace: no clash.
func Load() {}
