package embed

import "syscall"

// amxPermitted asks Linux for this process's permission to use the AMX
// tile data (arch_prctl ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA), which
// a process must have before its first tile instruction, and reports
// whether it was granted. The permission holds for every thread.
func amxPermitted() bool {
	const archReqXcompPerm, xfeatureXTileData = 0x1023, 18
	_, _, errno := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureXTileData, 0)
	return errno == 0
}
