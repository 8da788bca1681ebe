//go:build !cgo

package runtime

import "errors"

// Devices lists the NVIDIA GPUs that the driver sees. This kgen was built
// without cgo, which NVML's bindings need, so it always fails.
func Devices() ([]Device, error) {
	return nil, errors.New("GPU detection is unavailable: kgen was built without cgo, which NVML needs (rebuild with CGO_ENABLED=1)")
}
