module kgen.dev/kgen

go 1.26.8

require (
	github.com/NVIDIA/go-nvml v0.13.0-1
	github.com/alecthomas/participle/v2 v2.1.4
	github.com/google/go-cmp v0.7.0
	golang.org/x/tools v0.52.0
)
