//go:build !race

package testenv

// raceMemory is 1 without the race detector.
const raceMemory = 1
