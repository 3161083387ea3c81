#include "textflag.h"

// func fmaSVV32AVX(R, B, C []float64, x float32)
TEXT ·fmaSVV32AVX(SB), NOSPLIT, $0-76
	MOVQ R_base+0(FP), DI
	MOVQ R_len+8(FP), CX
	MOVQ B_base+24(FP), SI
	MOVQ C_base+48(FP), DX
	VBROADCASTSS x+72(FP), X0
	SHRQ $2, CX
	JZ   done

loop:
	VCVTPD2PSY  (SI), X1
	VCVTPD2PSY  (DX), X2
	VFMADD231PS X1, X0, X2
	VCVTPS2PD   X2, Y2
	VMOVUPD     Y2, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DX
	ADDQ        $32, DI
	DECQ        CX
	JNZ         loop

done:
	VZEROUPPER
	RET

// func cpuHasFMA() bool
TEXT ·cpuHasFMA(SB), NOSPLIT, $0-1
	MOVL $1, AX
	XORL CX, CX
	CPUID
	ANDL $0x18001000, CX
	CMPL CX, $0x18001000
	JNE  no
	XORL CX, CX
	XGETBV
	ANDL $6, AX
	CMPL AX, $6
	JNE  no
	MOVB $1, ret+0(FP)
	RET

no:
	MOVB $0, ret+0(FP)
	RET

// func narrowF64AVX(out []float32, in []float64)
TEXT ·narrowF64AVX(SB), NOSPLIT, $0-48
	MOVQ out_base+0(FP), DI
	MOVQ out_len+8(FP), CX
	MOVQ in_base+24(FP), SI
	SHRQ $2, CX
	JZ   ndone

nloop:
	VCVTPD2PSY (SI), X1
	VMOVUPS    X1, (DI)
	ADDQ       $32, SI
	ADDQ       $16, DI
	DECQ       CX
	JNZ        nloop

ndone:
	VZEROUPPER
	RET

// func roundF32AVX(R []float64)
TEXT ·roundF32AVX(SB), NOSPLIT, $0-24
	MOVQ R_base+0(FP), DI
	MOVQ R_len+8(FP), CX
	SHRQ $2, CX
	JZ   rdone

rloop:
	VCVTPD2PSY (DI), X1
	VCVTPS2PD  X1, Y1
	VMOVUPD    Y1, (DI)
	ADDQ       $32, DI
	DECQ       CX
	JNZ        rloop

rdone:
	VZEROUPPER
	RET

// BINF32 defines func name(R, A, B []float32): R[i] = A[i] op B[i] for the
// first len(R)&^7 elements, sixteen lanes at a time then eight (A is the
// first source, so NaN operands propagate as in scalar SSE code). Both
// sources are prefetched 2 KiB ahead (see widenF32AVX). Both loads of an
// iteration come before its stores, so R may be A or B.
#define BINF32(name, op) \
TEXT name(SB), NOSPLIT, $0-72 \
	MOVQ R_base+0(FP), DI \
	MOVQ R_len+8(FP), CX \
	MOVQ A_base+24(FP), SI \
	MOVQ B_base+48(FP), DX \
	MOVQ CX, BX \
	SHRQ $4, CX \
	JZ   14(PC) \
	PREFETCHT0 2048(SI) \
	PREFETCHT0 2048(DX) \
	VMOVUPS (SI), Y1 \
	VMOVUPS 32(SI), Y2 \
	op      (DX), Y1, Y0 \
	op      32(DX), Y2, Y3 \
	VMOVUPS Y0, (DI) \
	VMOVUPS Y3, 32(DI) \
	ADDQ    $64, SI \
	ADDQ    $64, DX \
	ADDQ    $64, DI \
	DECQ    CX \
	JNZ     -12(PC) \
	TESTQ   $8, BX \
	JZ      4(PC) \
	VMOVUPS (SI), Y1 \
	op      (DX), Y1, Y0 \
	VMOVUPS Y0, (DI) \
	VZEROUPPER \
	RET

BINF32(·addF32AVX, VADDPS)
BINF32(·subF32AVX, VSUBPS)
BINF32(·mulF32AVX, VMULPS)
BINF32(·divF32AVX, VDIVPS)

// func widenF32AVX(out []float64, in []float32)
//
// Sixteen lanes (one cache line of in) per iteration, prefetching 2 KiB
// ahead: the hardware prefetchers stop at 4 KiB pages, and the executor
// reads a block of each input in turn rather than all of them in step, so
// without this every page of every input starts with a miss to memory.
TEXT ·widenF32AVX(SB), NOSPLIT, $0-48
	MOVQ out_base+0(FP), DI
	MOVQ out_len+8(FP), CX
	MOVQ in_base+24(FP), SI
	MOVQ CX, DX
	SHRQ $4, CX
	JZ   pftail

pfloop:
	PREFETCHT0 2048(SI)
	VCVTPS2PD  (SI), Y1
	VCVTPS2PD  16(SI), Y2
	VCVTPS2PD  32(SI), Y3
	VCVTPS2PD  48(SI), Y4
	VMOVUPD    Y1, (DI)
	VMOVUPD    Y2, 32(DI)
	VMOVUPD    Y3, 64(DI)
	VMOVUPD    Y4, 96(DI)
	ADDQ       $64, SI
	ADDQ       $128, DI
	DECQ       CX
	JNZ        pfloop

pftail:
	ANDQ $15, DX
	SHRQ $2, DX
	JZ   pfdone

pfloop4:
	VCVTPS2PD (SI), Y1
	VMOVUPD   Y1, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	DECQ      DX
	JNZ       pfloop4

pfdone:
	VZEROUPPER
	RET

// func fmaVVV32AVX(R, A, B, C []float64)
//
// fmaSVV32AVX with a varying multiplier: R[i] = fmaf(A[i], B[i], C[i]).
// The three loads of an iteration come before its store, so R may be any
// of the sources.
TEXT ·fmaVVV32AVX(SB), NOSPLIT, $0-96
	MOVQ R_base+0(FP), DI
	MOVQ R_len+8(FP), CX
	MOVQ A_base+24(FP), R8
	MOVQ B_base+48(FP), SI
	MOVQ C_base+72(FP), DX
	SHRQ $2, CX
	JZ   vdone

vloop:
	VCVTPD2PSY  (R8), X0
	VCVTPD2PSY  (SI), X1
	VCVTPD2PSY  (DX), X2
	VFMADD231PS X1, X0, X2
	VCVTPS2PD   X2, Y2
	VMOVUPD     Y2, (DI)
	ADDQ        $32, R8
	ADDQ        $32, SI
	ADDQ        $32, DX
	ADDQ        $32, DI
	DECQ        CX
	JNZ         vloop

vdone:
	VZEROUPPER
	RET
