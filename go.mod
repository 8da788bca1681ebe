module kgen.dev/kgen

go 1.26.8

require (
	github.com/alecthomas/participle/v2 v2.1.4 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
)
