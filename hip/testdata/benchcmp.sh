#!/bin/sh
# benchcmp.sh runs hip's benchmarks and the native C baseline
# (bench_native.c) side by side at equal work, interleaved, on a machine
# with an NVIDIA GPU and nvcc.
#
# Usage, from anywhere:
#   hip/testdata/benchcmp.sh HIP_TEST_BINARY [launches [graph_launches [rounds]]]
# where HIP_TEST_BINARY comes from `CGO_ENABLED=0 go test -c -o hip.test ./hip`.
# launches is the number of direct launches each timed loop makes (Go:
# -test.benchtime=<launches>x), graph_launches the number of replays of each
# graph (-test.benchtime=<graph_launches>x). -test.run='^$' keeps the tests
# out of the benchmark process.
set -eu
bin=$(realpath "$1")
launches=${2:-200000}
graphs=${3:-2000}
rounds=${4:-2}
dir=$(cd "$(dirname "$0")" && pwd)
native=${TMPDIR:-/tmp}/hip_bench_native
nvcc -O2 -o "$native" "$dir/bench_native.c" -lcuda
# The in-process comparison (BenchmarkVersusNative) is the one the targets
# are read from: same thread, context and stream, alternating chunks.
LOOM_NATIVE_LOOP=${TMPDIR:-/tmp}/libnative_loop.so
export LOOM_NATIVE_LOOP
nvcc -O2 -shared -Xcompiler -fPIC -o "$LOOM_NATIVE_LOOP" "$dir/native_loop.c" -lcuda
cd "$dir/.."
echo "== in one process, alternating (${launches} launches or nodes a chunk)"
"$bin" -test.run='^$' -test.bench='^BenchmarkVersusNative$' -test.benchtime="${launches}x"
for r in $(seq "$rounds"); do
	echo "== round $r: native"
	"$native" testdata/kernels.ptx "$launches" "$graphs"
	echo "== round $r: go"
	"$bin" -test.run='^$' -test.bench='^BenchmarkLaunch(Empty|Raw|Submit)$' -test.benchtime="${launches}x"
	"$bin" -test.run='^$' -test.bench='^BenchmarkGraphReplay$' -test.benchtime="${graphs}x"
done
