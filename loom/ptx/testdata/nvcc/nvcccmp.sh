#!/bin/sh
# nvcccmp.sh compiles kernels.cu with nvcc and runs BenchmarkVersusNvcc,
# which times the Loom -> PTX kernels against these nvcc builds of the same
# algorithms. Run it on a machine with an NVIDIA GPU and the CUDA toolkit,
# from the repository root:
#
#   CGO_ENABLED=0 go test -c -o ptx.test ./loom/ptx     # anywhere
#   sh loom/ptx/testdata/nvcc/nvcccmp.sh ptx.test [extra test flags]
#
# Both modules go through the same driver JIT (cuModuleLoadData), so the
# comparison is between the PTX the two front ends emit. With PTX_DUMP set
# to a folder, both PTX texts are left there for reading side by side
# (<entry>.loom.ptx from the benchmark, kernels_nvcc.ptx from here).
set -eu

if [ $# -lt 1 ]; then
	echo "usage: sh loom/ptx/testdata/nvcc/nvcccmp.sh PTX_TEST_BINARY [test flags]" >&2
	exit 2
fi
bin=$1
shift
case $bin in
/*) ;;
*) bin=$PWD/$bin ;;
esac
if [ ! -x "$bin" ]; then
	echo "nvcccmp.sh: $bin is not an executable test binary" >&2
	exit 2
fi
src=loom/ptx/testdata/nvcc/kernels.cu
if [ ! -f "$src" ]; then
	echo "nvcccmp.sh: $src not found: run from the repository root" >&2
	exit 2
fi

nvcc=$(command -v nvcc || true)
if [ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
	nvcc=/usr/local/cuda/bin/nvcc
fi
if [ -z "$nvcc" ]; then
	echo "nvcccmp.sh: nvcc not found (not on PATH, not in /usr/local/cuda/bin)" >&2
	exit 1
fi

tmp=${TMPDIR:-/tmp}
out=$tmp/kernels_nvcc.ptx
"$nvcc" --version | tail -n 2
"$nvcc" -O3 -arch=sm_90 -ptx -o "$out" "$src"
echo "nvcc PTX: $out ($(wc -l <"$out") lines)"
if [ -n "${PTX_DUMP:-}" ]; then
	mkdir -p "$PTX_DUMP"
	# Absolute, since the benchmark runs from loom/ptx.
	PTX_DUMP=$(cd "$PTX_DUMP" && pwd)
	export PTX_DUMP
	cp "$out" "$PTX_DUMP/"
fi

export LOOM_NVCC_PTX="$out"
cd loom/ptx
exec "$bin" -test.run '^$' -test.bench '^BenchmarkVersusNvcc$' -test.benchtime 20x "$@"
