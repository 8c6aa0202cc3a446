//go:build !race

package rescale

const javahashRace = false
