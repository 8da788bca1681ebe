//go:build cgo

package runtime

import (
	"errors"
	"fmt"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// nvmlLib is opened (dlopen of libnvidia-ml.so.1) on first use, so kgen
// builds and runs on machines without the driver.
var (
	nvmlOnce sync.Once
	nvmlLib  nvml.Interface
	nvmlMu   sync.Mutex // NVML init/shutdown is reference counted; keep our use serial
)

// Devices lists the NVIDIA GPUs that the driver sees. Without a usable
// driver it returns an error wrapping ErrNoDriver that says why, e.g.
// "no NVIDIA driver found (NVML: Driver Not Loaded)". When some GPUs can
// be read and others cannot, it returns both the devices and an error.
func Devices() ([]Device, error) {
	nvmlOnce.Do(func() { nvmlLib = nvml.New() })
	nvmlMu.Lock()
	defer nvmlMu.Unlock()
	return devicesFrom(nvmlLib)
}

func devicesFrom(lib nvml.Interface) ([]Device, error) {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return nil, nvmlInitError(ret)
	}
	defer lib.Shutdown()
	driver, _ := lib.SystemGetDriverVersion()
	cudaVersion := ""
	if v, ret := lib.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS && v > 0 {
		cudaVersion = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
	}
	count, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML: counting GPUs: %v", ret)
	}
	var devs []Device
	var errs []error
	for i := range count {
		h, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			errs = append(errs, fmt.Errorf("GPU %d: %v", i, ret))
			continue
		}
		d := Device{Index: i, Driver: driver, CUDAVersion: cudaVersion}
		if d.Name, ret = h.GetName(); ret != nvml.SUCCESS {
			errs = append(errs, fmt.Errorf("GPU %d: reading its name: %v", i, ret))
			continue
		}
		d.UUID, _ = h.GetUUID()
		d.CCMajor, d.CCMinor, _ = h.GetCudaComputeCapability()
		if mem, ret := h.GetMemoryInfo(); ret == nvml.SUCCESS {
			d.MemoryBytes = mem.Total
		}
		d.SMClockMHz = clock(h.GetClockInfo(nvml.CLOCK_SM))
		d.MemClockMHz = clock(h.GetClockInfo(nvml.CLOCK_MEM))
		d.MaxSMClockMHz = clock(h.GetMaxClockInfo(nvml.CLOCK_SM))
		d.SMs = smCount(h, d.CCMajor, d.CCMinor)
		devs = append(devs, d)
	}
	return devs, errors.Join(errs...)
}

func clock(mhz uint32, ret nvml.Return) int {
	if ret != nvml.SUCCESS {
		return 0
	}
	return int(mhz)
}

// smCount asks NVML for the SM count: MIG instances report it directly;
// whole GPUs report cores, which divide by the cores per SM of their
// architecture. 0 when neither works.
func smCount(h nvml.Device, major, minor int) int {
	if a, ret := h.GetAttributes(); ret == nvml.SUCCESS && a.MultiprocessorCount > 0 {
		return int(a.MultiprocessorCount)
	}
	cores, ret := h.GetNumGpuCores()
	per := coresPerSM[[2]int{major, minor}]
	if ret != nvml.SUCCESS || per == 0 || cores <= 0 || cores%per != 0 {
		return 0
	}
	return cores / per
}

// nvmlInitError says why NVML could not start, in the user's terms.
func nvmlInitError(ret nvml.Return) error {
	switch ret {
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return fmt.Errorf("%w (NVML: libnvidia-ml.so.1 not found; install the NVIDIA driver)", ErrNoDriver)
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return fmt.Errorf("%w (NVML: Driver Not Loaded)", ErrNoDriver)
	case nvml.ERROR_NO_PERMISSION:
		return fmt.Errorf("%w (NVML: Insufficient Permissions; can this user open /dev/nvidia*?)", ErrNoDriver)
	case nvml.ERROR_LIB_RM_VERSION_MISMATCH:
		return fmt.Errorf("%w (NVML: the driver library and the loaded kernel module differ in version; reboot or reload the module)", ErrNoDriver)
	}
	return fmt.Errorf("%w (NVML: %v)", ErrNoDriver, ret)
}
