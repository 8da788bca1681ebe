package runtime

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// On a machine without a GPU, Devices reports why instead of crashing;
// on one with a GPU it lists it.
func TestDevices(t *testing.T) {
	devs, err := Devices()
	// The kernel module publishes this file; /dev/nvidiactl alone proves
	// nothing (a CUDA toolkit install can create it without a driver).
	if _, statErr := os.Stat("/proc/driver/nvidia/version"); statErr != nil {
		if err == nil {
			t.Fatalf("Devices() = %+v with no NVIDIA kernel module; want an error", devs)
		}
		if len(devs) != 0 {
			t.Errorf("devices %+v alongside %v", devs, err)
		}
		if !errors.Is(err, ErrNoDriver) && !strings.Contains(err.Error(), "without cgo") {
			t.Errorf("error %v does not wrap ErrNoDriver", err)
		}
		t.Logf("Devices(): %v", err)
		return
	}
	if err != nil {
		t.Fatalf("Devices() with the NVIDIA kernel module loaded: %v", err)
	}
	for _, d := range devs {
		t.Logf("%+v", d)
		if d.Name == "" || d.CCMajor < 3 || d.MemoryBytes == 0 || d.Driver == "" {
			t.Errorf("implausible device %+v", d)
		}
	}
}
