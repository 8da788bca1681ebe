//go:build cgo

package runtime

import (
	"errors"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// h100 is a mock of an H100 SXM as NVML 580 describes it. Every method
// devicesFrom may call is set: the mock panics on the others.
func h100(cores int, coresRet nvml.Return) *mock.Device {
	return &mock.Device{
		GetNameFunc:                  func() (string, nvml.Return) { return "NVIDIA H100 80GB HBM3", nvml.SUCCESS },
		GetUUIDFunc:                  func() (string, nvml.Return) { return "GPU-0d1f", nvml.SUCCESS },
		GetCudaComputeCapabilityFunc: func() (int, int, nvml.Return) { return 9, 0, nvml.SUCCESS },
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: 85520809984, Free: 1, Used: 2}, nvml.SUCCESS
		},
		GetClockInfoFunc: func(c nvml.ClockType) (uint32, nvml.Return) {
			switch c {
			case nvml.CLOCK_SM:
				return 345, nvml.SUCCESS
			case nvml.CLOCK_MEM:
				return 2619, nvml.SUCCESS
			}
			return 0, nvml.ERROR_INVALID_ARGUMENT
		},
		GetMaxClockInfoFunc: func(c nvml.ClockType) (uint32, nvml.Return) {
			if c == nvml.CLOCK_SM {
				return 1980, nvml.SUCCESS
			}
			return 0, nvml.ERROR_NOT_SUPPORTED
		},
		GetAttributesFunc:  func() (nvml.DeviceAttributes, nvml.Return) { return nvml.DeviceAttributes{}, nvml.ERROR_NOT_SUPPORTED },
		GetNumGpuCoresFunc: func() (int, nvml.Return) { return cores, coresRet },
	}
}

func mockLib(init nvml.Return, devs ...nvml.Device) *mock.Interface {
	return &mock.Interface{
		InitFunc:                       func() nvml.Return { return init },
		ShutdownFunc:                   func() nvml.Return { return nvml.SUCCESS },
		SystemGetDriverVersionFunc:     func() (string, nvml.Return) { return "580.159.04", nvml.SUCCESS },
		SystemGetCudaDriverVersionFunc: func() (int, nvml.Return) { return 13000, nvml.SUCCESS },
		DeviceGetCountFunc:             func() (int, nvml.Return) { return len(devs), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			if devs[i] == nil {
				return nil, nvml.ERROR_GPU_IS_LOST
			}
			return devs[i], nvml.SUCCESS
		},
	}
}

func TestDevicesFromNVML(t *testing.T) {
	lib := mockLib(nvml.SUCCESS, h100(16896, nvml.SUCCESS), nil, h100(0, nvml.ERROR_NOT_SUPPORTED))
	devs, err := devicesFrom(lib)
	want := Device{Index: 0, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-0d1f", CCMajor: 9, CCMinor: 0,
		SMs: 132, MemoryBytes: 85520809984, SMClockMHz: 345, MemClockMHz: 2619, MaxSMClockMHz: 1980,
		Driver: "580.159.04", CUDAVersion: "13.0"}
	if len(devs) != 2 || devs[0] != want {
		t.Fatalf("got %+v\nwant [%+v, ...]", devs, want)
	}
	// GPU 1 is lost: reported, and the others are still listed.
	if err == nil || !strings.Contains(err.Error(), "GPU 1") {
		t.Errorf("err = %v, want one naming GPU 1", err)
	}
	if devs[1].Index != 2 || devs[1].SMs != 0 {
		t.Errorf("GPU 2 without a core count: %+v, want index 2 and 0 SMs", devs[1])
	}
	if devs[0].Arch() != "sm_90" {
		t.Errorf("Arch() = %s", devs[0].Arch())
	}
	if len(lib.ShutdownCalls()) != 1 {
		t.Errorf("Shutdown called %d times after a successful Init", len(lib.ShutdownCalls()))
	}
}

func TestDevicesNVMLInitFails(t *testing.T) {
	cases := []struct {
		ret  nvml.Return
		want string
	}{
		{nvml.ERROR_DRIVER_NOT_LOADED, "no NVIDIA driver found (NVML: Driver Not Loaded)"},
		{nvml.ERROR_LIBRARY_NOT_FOUND, "no NVIDIA driver found (NVML: libnvidia-ml.so.1 not found; install the NVIDIA driver)"},
		{nvml.ERROR_NO_PERMISSION, "Insufficient Permissions"},
	}
	for _, c := range cases {
		lib := mockLib(c.ret)
		devs, err := devicesFrom(lib)
		if devs != nil || err == nil || !errors.Is(err, ErrNoDriver) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Init %d: got %v, %v; want an ErrNoDriver containing %q", c.ret, devs, err, c.want)
		}
		if len(lib.ShutdownCalls()) != 0 || len(lib.DeviceGetCountCalls()) != 0 {
			t.Errorf("Init %d: NVML used after a failed Init", c.ret)
		}
	}
}
