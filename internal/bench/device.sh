#!/bin/sh
# device.sh runs the whole loombench suite on a GPU machine without Go,
# from binaries built elsewhere:
#
#   CGO_ENABLED=0 go build -o DIR/loombench ./cmd/loombench
#   CGO_ENABLED=0 go test -c -o DIR/hip.test ./hip
#   CGO_ENABLED=0 go test -c -o DIR/runtime.test ./runtime     # optional
#   cp -r hip/testdata DIR/hip/ && cp internal/bench/device.sh DIR/
#   (on the GPU machine) sh DIR/device.sh DIR OUT
#
# It builds hip/testdata/native_loop.c with nvcc (as hip/testdata/benchcmp.sh
# does), runs hip's and the runtime's in-process comparisons with native C,
# then loombench, which builds its own CUDA sources, runs the GPU and CPU
# suites and adds those comparisons to OUT/loombench.json. LOOMBENCH_LAUNCHES
# sets the launches per timed chunk of the native comparisons (50000). Any other
# *.test binary in DIR whose benchmarks match $LOOMBENCH_EXTRA (a -test.bench
# pattern) is run too and its ratios added under group "extra".
set -eu
dir=$(cd "$1" && pwd)
out=$(mkdir -p "$2" && cd "$2" && pwd)
shift 2
native=$out/libnative_loop.so
nvcc -O2 -shared -Xcompiler -fPIC -o "$native" "$dir/hip/testdata/native_loop.c" -lcuda
export LOOM_NATIVE_LOOP="$native"
ingest=""
(cd "$dir/hip" && "$dir/hip.test" -test.run '^$' -test.bench '^BenchmarkVersusNative$' -test.benchtime="${LOOMBENCH_LAUNCHES:-50000}x" -hip.rounds 21) >"$out/hip.txt" 2>&1 || true
ingest="$ingest -ingest launch=$out/hip.txt"
if [ -x "$dir/runtime.test" ]; then
	(cd "$dir" && "$dir/runtime.test" -test.run '^$' -test.bench '^Benchmark(Session|Layers)VersusNative$' -test.benchtime="${LOOMBENCH_LAUNCHES:-50000}x") >"$out/runtime.txt" 2>&1 || true
	ingest="$ingest -ingest launch=$out/runtime.txt"
fi
if [ -n "${LOOMBENCH_EXTRA:-}" ]; then
	for t in "$dir"/*.test; do
		case $t in */hip.test | */runtime.test) continue ;; esac
		(cd "$dir" && "$t" -test.run '^$' -test.bench "$LOOMBENCH_EXTRA" -test.benchtime=20x) >>"$out/extra.txt" 2>&1 || true
	done
	ingest="$ingest -ingest extra=$out/extra.txt"
fi
# shellcheck disable=SC2086
"$dir/loombench" -o "$out/loombench.json" -dump "$out" $ingest "$@" 2>&1 | tee "$out/loombench.log"
