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

// func widenF32AVX(out []float64, in []float32)
TEXT ·widenF32AVX(SB), NOSPLIT, $0-48
	MOVQ out_base+0(FP), DI
	MOVQ out_len+8(FP), CX
	MOVQ in_base+24(FP), SI
	SHRQ $2, CX
	JZ   wdone

wloop:
	VCVTPS2PD (SI), Y1
	VMOVUPD   Y1, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       wloop

wdone:
	VZEROUPPER
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
// first len(R)&^7 elements, eight lanes at a time (A is the first source,
// so NaN operands propagate as in scalar SSE code).
#define BINF32(name, op) \
TEXT name(SB), NOSPLIT, $0-72 \
	MOVQ R_base+0(FP), DI \
	MOVQ R_len+8(FP), CX \
	MOVQ A_base+24(FP), SI \
	MOVQ B_base+48(FP), DX \
	SHRQ $3, CX \
	JZ   2(PC) \
	JMP  3(PC) \
	VZEROUPPER \
	RET \
	VMOVUPS (SI), Y1 \
	op      (DX), Y1, Y0 \
	VMOVUPS Y0, (DI) \
	ADDQ    $32, SI \
	ADDQ    $32, DX \
	ADDQ    $32, DI \
	DECQ    CX \
	JNZ     -7(PC) \
	VZEROUPPER \
	RET

BINF32(·addF32AVX, VADDPS)
BINF32(·subF32AVX, VSUBPS)
BINF32(·mulF32AVX, VMULPS)
BINF32(·divF32AVX, VDIVPS)
