//go:build race

package testenv

// raceMemory: the race detector's shadow memory multiplies what a process
// holds (Go's documentation says 5 to 10 times; TestGzipBomb's child grew
// by 163 MB without it, 490 to 540 MB with it).
const raceMemory = 4
