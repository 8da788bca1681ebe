package runtime

// The Triton backend's targets: the CUDA architectures Triton compiles
// for, with their facts, planned with the tile-level templates. Triton
// itself picks the instructions (mma, wgmma on sm_90 when it can), so no
// CUDA-only template is offered.
func init() {
	archs := map[string]TargetFacts{}
	for _, a := range []string{"sm_80", "sm_90"} {
		f := targetFacts[a]
		f.Tiles = true
		f.WGMMA, f.Clusters = false, false
		archs[a] = f
	}
	backendArchs["triton"] = archs
}
