//go:build race

package rescale

// javahashRace: the golden test checks a third of the name sets under the race detector, which
// adds nothing to this single-goroutine model but costs ten times the time.
const javahashRace = true
