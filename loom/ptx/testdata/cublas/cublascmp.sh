#!/bin/sh
# cublascmp.sh builds gemm_shim.c against cuBLAS with nvcc and runs
# BenchmarkTensorCoreVersusCublas, which times the Loom tensor-core matmul
# (testdata/matmul_tc.loom) against cublasGemmEx at 4096^3, f16 and bf16
# inputs, f32 accumulation. On a machine with an NVIDIA GPU and the CUDA
# toolkit, from the repository root:
#
#   CGO_ENABLED=0 go test -c -o ptx.test ./loom/ptx     # anywhere
#   sh loom/ptx/testdata/cublas/cublascmp.sh ptx.test [extra test flags]
set -eu

if [ $# -lt 1 ]; then
	echo "usage: sh loom/ptx/testdata/cublas/cublascmp.sh PTX_TEST_BINARY [test flags]" >&2
	exit 2
fi
bin=$1
shift
case $bin in
/*) ;;
*) bin=$PWD/$bin ;;
esac
src=loom/ptx/testdata/cublas/gemm_shim.c
if [ ! -f "$src" ]; then
	echo "cublascmp.sh: $src not found: run from the repository root" >&2
	exit 2
fi
nvcc=$(command -v nvcc || true)
if [ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
	nvcc=/usr/local/cuda/bin/nvcc
fi
if [ -z "$nvcc" ]; then
	echo "cublascmp.sh: nvcc not found (not on PATH, not in /usr/local/cuda/bin)" >&2
	exit 1
fi
tmp=${TMPDIR:-/tmp}
lib=$tmp/libloom_gemm_shim.so
cudalib=$(dirname "$nvcc")/../lib64
"$nvcc" -O2 -shared -Xcompiler -fPIC -o "$lib" "$src" -lcublas -Xlinker -rpath -Xlinker "$cudalib"
export LOOM_CUBLAS_SHIM="$lib"
cd loom/ptx
exec "$bin" -test.run '^$' -test.bench '^BenchmarkTensorCoreVersusCublas$' -test.benchtime 10x "$@"
