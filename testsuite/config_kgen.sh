#!/bin/sh
# Writes bin/NAME: bin/KGEN with --config CONFIG after its command, so
# that scripts that take binaries by name (gpu_before_after.sh's KGENS)
# time one configuration of a launch against another kgen or the default.
#   testsuite/config_kgen.sh kgen-s16 kgen row-reduce.STAGE=1,row-reduce.CLUSTER=16
set -eu
[ $# -eq 3 ] || { echo "usage: $0 NAME KGEN CONFIG" >&2; exit 2; }
printf '#!/bin/sh\ncmd=$1; shift\nexec "$(dirname "$0")/%s" "$cmd" --config %s "$@"\n' "$2" "$3" > "bin/$1.tmp"
chmod +x "bin/$1.tmp"
mv "bin/$1.tmp" "bin/$1"
