#include "textflag.h"

// Lane loops of the 32-bit int ops on registers of sign-extended values
// (one int64 a lane): each computes the op on the low doublewords, then
// fills every high doubleword with its low one's sign (the low doubleword
// moved up, shifted arithmetically by 31, blended in), which is the wrap
// to 32 bits. Four lanes an iteration, len(R)&^3 lanes in
// all; both loads of an iteration come before its store, so R may be A or
// B.

// VV32 defines func name(R, A, B []int64): R[i] = A[i] op B[i].
#define VV32(name, op) \
TEXT name(SB), NOSPLIT, $0-72 \
	MOVQ R_base+0(FP), DI \
	MOVQ R_len+8(FP), CX \
	MOVQ A_base+24(FP), SI \
	MOVQ B_base+48(FP), DX \
	SHRQ $2, CX \
	JZ   12(PC) \
	VMOVDQU (SI), Y0 \
	op      (DX), Y0, Y0 \
	VPSLLQ  $32, Y0, Y1 \
	VPSRAD  $31, Y1, Y1 \
	VPBLENDD $0xAA, Y1, Y0, Y0 \
	VMOVDQU Y0, (DI) \
	ADDQ    $32, SI \
	ADDQ    $32, DX \
	ADDQ    $32, DI \
	DECQ    CX \
	JNZ     -10(PC) \
	VZEROUPPER \
	RET

// VS32 defines func name(R, A []int64, s int64): R[i] = A[i] op s.
#define VS32(name, op) \
TEXT name(SB), NOSPLIT, $0-56 \
	MOVQ R_base+0(FP), DI \
	MOVQ R_len+8(FP), CX \
	MOVQ A_base+24(FP), SI \
	VPBROADCASTD s+48(FP), Y2 \
	SHRQ $2, CX \
	JZ   11(PC) \
	VMOVDQU (SI), Y0 \
	op      Y2, Y0, Y0 \
	VPSLLQ  $32, Y0, Y1 \
	VPSRAD  $31, Y1, Y1 \
	VPBLENDD $0xAA, Y1, Y0, Y0 \
	VMOVDQU Y0, (DI) \
	ADDQ    $32, SI \
	ADDQ    $32, DI \
	DECQ    CX \
	JNZ     -9(PC) \
	VZEROUPPER \
	RET

VV32(·addI32VV, VPADDD)
VV32(·subI32VV, VPSUBD)
VV32(·mulI32VV, VPMULLD)
VV32(·andI32VV, VPAND)
VV32(·orI32VV, VPOR)
VV32(·xorI32VV, VPXOR)
VV32(·shlI32VV, VPSLLVD)
VV32(·shrI32VV, VPSRLVD)
VV32(·sarI32VV, VPSRAVD)

VS32(·addI32VS, VPADDD)
VS32(·subI32VS, VPSUBD)
VS32(·mulI32VS, VPMULLD)
VS32(·andI32VS, VPAND)
VS32(·orI32VS, VPOR)
VS32(·xorI32VS, VPXOR)
VS32(·shlI32VS, VPSLLVD)
VS32(·shrI32VS, VPSRLVD)
VS32(·sarI32VS, VPSRAVD)

// func wrapAVX2(R, A []int64, m, h int64): R[i] = ((A[i] & m) ^ h) - h,
// A's low bits sign-extended from the width whose mask is m and sign bit
// h; len(R)&^3 elements, four at a time (R may be A).
TEXT ·wrapAVX2(SB), NOSPLIT, $0-64
	MOVQ         R_base+0(FP), DI
	MOVQ         R_len+8(FP), CX
	MOVQ         A_base+24(FP), SI
	VPBROADCASTQ m+48(FP), Y2
	VPBROADCASTQ h+56(FP), Y3
	SHRQ         $2, CX
	JZ           wdone

wloop:
	VPAND   (SI), Y2, Y0
	VPXOR   Y3, Y0, Y0
	VPSUBQ  Y3, Y0, Y0
	VMOVDQU Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     wloop

wdone:
	VZEROUPPER
	RET

// func cpuHasAVX2() bool: CPUID leaf 7 reports AVX2 (the OS's saving of
// the YMM registers is cpuHasFMA's test).
TEXT ·cpuHasAVX2(SB), NOSPLIT, $0-1
	XORL AX, AX
	CPUID
	CMPL AX, $7
	JB   no2
	MOVL $7, AX
	XORL CX, CX
	CPUID
	ANDL $0x20, BX
	JZ   no2
	MOVB $1, ret+0(FP)
	RET

no2:
	MOVB $0, ret+0(FP)
	RET

// Lane loops of the index ops whose result keeps the carrier check (one
// int64 a lane): the op on quadwords, every result compared with the
// carrier's bounds as it is stored, and the comparisons or-ed together;
// they return whether no element lies outside [lo, hi].

// VV64R defines func name(R, A, B []int64, lo, hi int64) bool:
// R[i] = A[i] op B[i].
#define VV64R(name, op) \
TEXT name(SB), NOSPLIT, $0-89 \
	MOVQ R_base+0(FP), DI \
	MOVQ R_len+8(FP), CX \
	MOVQ A_base+24(FP), SI \
	MOVQ B_base+48(FP), DX \
	VPBROADCASTQ lo+72(FP), Y3 \
	VPBROADCASTQ hi+80(FP), Y4 \
	VPXOR Y5, Y5, Y5 \
	SHRQ $2, CX \
	JZ   13(PC) \
	VMOVDQU (SI), Y0 \
	op      (DX), Y0, Y0 \
	VMOVDQU Y0, (DI) \
	VPCMPGTQ Y4, Y0, Y1 \
	VPOR    Y1, Y5, Y5 \
	VPCMPGTQ Y0, Y3, Y1 \
	VPOR    Y1, Y5, Y5 \
	ADDQ    $32, SI \
	ADDQ    $32, DX \
	ADDQ    $32, DI \
	DECQ    CX \
	JNZ     -11(PC) \
	VPTEST  Y5, Y5 \
	SETEQ   ret+88(FP) \
	VZEROUPPER \
	RET

// VS64R defines func name(R, A []int64, s, lo, hi int64) bool:
// R[i] = A[i] op s.
#define VS64R(name, op) \
TEXT name(SB), NOSPLIT, $0-73 \
	MOVQ R_base+0(FP), DI \
	MOVQ R_len+8(FP), CX \
	MOVQ A_base+24(FP), SI \
	VPBROADCASTQ s+48(FP), Y2 \
	VPBROADCASTQ lo+56(FP), Y3 \
	VPBROADCASTQ hi+64(FP), Y4 \
	VPXOR Y5, Y5, Y5 \
	SHRQ $2, CX \
	JZ   12(PC) \
	VMOVDQU (SI), Y0 \
	op      Y2, Y0, Y0 \
	VMOVDQU Y0, (DI) \
	VPCMPGTQ Y4, Y0, Y1 \
	VPOR    Y1, Y5, Y5 \
	VPCMPGTQ Y0, Y3, Y1 \
	VPOR    Y1, Y5, Y5 \
	ADDQ    $32, SI \
	ADDQ    $32, DI \
	DECQ    CX \
	JNZ     -10(PC) \
	VPTEST  Y5, Y5 \
	SETEQ   ret+72(FP) \
	VZEROUPPER \
	RET

VV64R(·addI64VVR, VPADDQ)
VV64R(·subI64VVR, VPSUBQ)
VV64R(·andI64VVR, VPAND)
VV64R(·orI64VVR, VPOR)
VV64R(·xorI64VVR, VPXOR)

VS64R(·addI64VSR, VPADDQ)
VS64R(·subI64VSR, VPSUBQ)
VS64R(·andI64VSR, VPAND)
VS64R(·orI64VSR, VPOR)
VS64R(·xorI64VSR, VPXOR)
