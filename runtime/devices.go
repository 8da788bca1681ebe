package runtime

import (
	"errors"
	"fmt"
)

// Device is an NVIDIA GPU as NVML reports it.
type Device struct {
	Index         int    `json:"index"`
	Name          string `json:"name"` // "NVIDIA H100 80GB HBM3"
	UUID          string `json:"uuid"`
	CCMajor       int    `json:"cc_major"` // compute capability
	CCMinor       int    `json:"cc_minor"`
	SMs           int    `json:"sms"` // 0 when NVML cannot tell (the runner asks CUDA instead)
	MemoryBytes   uint64 `json:"memory_bytes"`
	SMClockMHz    int    `json:"sm_clock_mhz"`  // current
	MemClockMHz   int    `json:"mem_clock_mhz"` // current
	MaxSMClockMHz int    `json:"max_sm_clock_mhz"`
	Driver        string `json:"driver"` // driver version, "535.104.05"
	// CUDAVersion is the newest CUDA the driver supports, "12.2": kernels
	// from a newer nvcc will not load.
	CUDAVersion string `json:"cuda_version"`
}

// Arch returns the device's architecture name, "sm_90".
func (d Device) Arch() string { return fmt.Sprintf("sm_%d%d", d.CCMajor, d.CCMinor) }

// ErrNoDriver is wrapped by Devices' error when no NVIDIA driver can be
// used: the library is missing, the kernel module is not loaded, or the
// device files cannot be opened.
var ErrNoDriver = errors.New("no NVIDIA driver found")

// coresPerSM is the number of FP32 cores per SM by compute capability:
// NVML reports cores, not SMs, for whole GPUs.
var coresPerSM = map[[2]int]int{
	{7, 0}: 64, {7, 2}: 64, {7, 5}: 64,
	{8, 0}: 64, {8, 6}: 128, {8, 7}: 128, {8, 9}: 128,
	{9, 0}:  128,
	{10, 0}: 128, {12, 0}: 128,
}
