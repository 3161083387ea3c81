#!/bin/sh
# device.sh runs the whole loombench suite on a GPU machine without Go,
# from binaries built elsewhere. Lay out DIR (from the repository root):
#
#   CGO_ENABLED=0 go build -o DIR/loombench ./cmd/loombench
#   CGO_ENABLED=0 go test -c -o DIR/hip.test ./hip
#   CGO_ENABLED=0 go test -c -o DIR/runtime.test ./runtime
#   CGO_ENABLED=0 go test -c -o DIR/ptx.test ./loom/ptx
#   mkdir -p DIR/hip DIR/loom/ptx DIR/examples/gen
#   cp -r hip/testdata DIR/hip/ && cp -r loom/testdata DIR/loom/
#   cp -r loom/ptx/testdata DIR/loom/ptx/ && cp -r examples/gen/kernels DIR/examples/gen/
#   cp internal/bench/device.sh DIR/
#
# then on the GPU machine: sh DIR/device.sh DIR OUT [loombench flags].
# It builds hip/testdata/native_loop.c (as hip/testdata/benchcmp.sh does)
# and loom/ptx/testdata/cublas/gemm_shim.c with nvcc, runs the in-process
# comparisons that live in test binaries (hip's launch and graph replay and
# the runtime session's dispatch against native C, the tensor-core matmul
# against cuBLAS; each binary that is missing is skipped), then loombench,
# which builds its own CUDA sources, runs the GPU and CPU suites and adds
# those comparisons to OUT/loombench.json. LOOMBENCH_LAUNCHES sets the
# launches per timed chunk of hip's native comparisons (default 50000);
# LOOMBENCH_ROUNDS the rounds of the session's (default 2001, as BENCHMARKS.md
# reads target 4: each a chunk of 256 launches a side, timed as submitted,
# BenchmarkSessionVersusNative/submit and BenchmarkLayersVersusNative).
set -eu
dir=$(cd "$1" && pwd)
out=$(mkdir -p "$2" && cd "$2" && pwd)
shift 2
launches=${LOOMBENCH_LAUNCHES:-50000}
rounds=${LOOMBENCH_ROUNDS:-2001}
nvcc -O2 -shared -Xcompiler -fPIC -o "$out/libnative_loop.so" "$dir/hip/testdata/native_loop.c" -lcuda
export LOOM_NATIVE_LOOP="$out/libnative_loop.so"
ingest=""
if [ -x "$dir/hip.test" ]; then
	(cd "$dir/hip" && "$dir/hip.test" -test.run '^$' -test.bench '^BenchmarkVersusNative$/^(launch|graph)' -test.benchtime="${launches}x" -hip.rounds 21) >"$out/hip.txt" 2>&1 || true
	ingest="$ingest -ingest launch=$out/hip.txt"
fi
if [ -x "$dir/runtime.test" ]; then
	(cd "$dir" && "$dir/runtime.test" -test.run '^$' -test.bench '^Benchmark(Session|Layers)VersusNative$/^(submit|hip|hip-packed|backend|session-unpacked|session)$' -test.benchtime="${rounds}x") >"$out/runtime.txt" 2>&1 || true
	ingest="$ingest -ingest launch=$out/runtime.txt"
fi
if [ -x "$dir/ptx.test" ] && [ -f "$dir/loom/ptx/testdata/cublas/gemm_shim.c" ]; then
	cudalib=$(dirname "$(command -v nvcc)")/../lib64
	nvcc -O2 -shared -Xcompiler -fPIC -o "$out/libloom_gemm_shim.so" "$dir/loom/ptx/testdata/cublas/gemm_shim.c" -lcublas -Xlinker -rpath -Xlinker "$cudalib"
	(cd "$dir/loom/ptx" && LOOM_CUBLAS_SHIM="$out/libloom_gemm_shim.so" "$dir/ptx.test" -test.run '^$' -test.bench '^BenchmarkTensorCoreVersusCublas$' -test.benchtime=20x) >"$out/tensorcore.txt" 2>&1 || true
	ingest="$ingest -ingest gpu-tensorcore=$out/tensorcore.txt"
fi
# shellcheck disable=SC2086
"$dir/loombench" -o "$out/loombench.json" $ingest "$@" 2>&1 | tee "$out/loombench.log"
