#include "textflag.h"

// OFFSETS loads the next four lanes' indices (i0 at SI, i1 at R8) and
// sets Y1 to their elements, e = b + i0·st0 + i1·st1, after testing that
// 0 ≤ i0 < dim0, 0 ≤ i1 < dim1 and 0 ≤ e < n on the whole 64-bit values
// (signed compares against -1 and the bounds); it jumps to bad where a
// lane fails. The products take the indices' low doublewords (VPMULDQ),
// exact for every index that passes its test as the dims and strides fit
// in 31 bits (the caller's check). LOADDIMS sets the registers it reads
// from the gatherDims at AX and b at b+80(FP).
#define LOADDIMS \
	VPBROADCASTQ b+80(FP), Y8 \
	VPBROADCASTQ 0(AX), Y9 \
	VPBROADCASTQ 8(AX), Y10 \
	VPBROADCASTQ 16(AX), Y13 \
	VPBROADCASTQ 24(AX), Y14 \
	VPBROADCASTQ 32(AX), Y11 \
	VPCMPEQQ     Y12, Y12, Y12

#define OFFSETS(bad) \
	VMOVDQU   (SI), Y0 \
	VMOVDQU   (R8), Y6 \
	VPMULDQ   Y9, Y0, Y1 \
	VPMULDQ   Y13, Y6, Y7 \
	VPADDQ    Y8, Y1, Y1 \
	VPADDQ    Y7, Y1, Y1 \
	VPCMPGTQ  Y12, Y0, Y2 \
	VPCMPGTQ  Y0, Y10, Y3 \
	VPAND     Y3, Y2, Y2 \
	VPCMPGTQ  Y12, Y6, Y3 \
	VPAND     Y3, Y2, Y2 \
	VPCMPGTQ  Y6, Y14, Y3 \
	VPAND     Y3, Y2, Y2 \
	VPCMPGTQ  Y12, Y1, Y3 \
	VPAND     Y3, Y2, Y2 \
	VPCMPGTQ  Y1, Y11, Y3 \
	VPAND     Y3, Y2, Y2 \
	VMOVMSKPD Y2, BX \
	CMPL      BX, $15 \
	JNE       bad \
	VMOVQ        X1, R9 \
	VPEXTRQ      $1, X1, R10 \
	VEXTRACTI128 $1, Y1, X6 \
	VMOVQ        X6, R11 \
	VPEXTRQ      $1, X6, R12

// func gatherF32AVX(out []float64, i0, i1 []int64, src *float32, b int64, d *gatherDims) bool
//
// Four lanes an iteration: OFFSETS, then the four elements loaded one by
// one into a register (134 ns for 256 lanes against VGATHERQPS's 154 on
// the 2-core AMD Turin host, and not slowed down by the microcode that
// guards gathers on Intel's cores since 2023) and widened. The first
// group with a lane out of range stops the loop and returns false;
// earlier groups are written.
TEXT ·gatherF32AVX(SB), NOSPLIT, $0-97
	MOVQ out_base+0(FP), DI
	MOVQ out_len+8(FP), CX
	MOVQ i0_base+24(FP), SI
	MOVQ i1_base+48(FP), R8
	MOVQ src+72(FP), DX
	MOVQ d+88(FP), AX
	LOADDIMS
	SHRQ $2, CX
	JZ   gok

gloop:
	OFFSETS(gbad)
	VMOVSS    (DX)(R9*4), X5
	VINSERTPS $0x10, (DX)(R10*4), X5, X5
	VINSERTPS $0x20, (DX)(R11*4), X5, X5
	VINSERTPS $0x30, (DX)(R12*4), X5, X5
	VCVTPS2PD X5, Y5
	VMOVUPD   Y5, (DI)
	ADDQ      $32, SI
	ADDQ      $32, R8
	ADDQ      $32, DI
	DECQ      CX
	JNZ       gloop

gok:
	VZEROUPPER
	MOVB $1, ret+96(FP)
	RET

gbad:
	VZEROUPPER
	MOVB $0, ret+96(FP)
	RET

// func scatterF32AVX(in []float64, i0, i1 []int64, dst *float32, b int64, d *gatherDims) bool
//
// The store of gatherF32AVX: four lanes an iteration, OFFSETS, then the
// four values narrowed (round to nearest even, as Go's conversion) and
// stored one by one in lane order, so where lanes share an element the
// last one's value stays, as in the lane loop.
TEXT ·scatterF32AVX(SB), NOSPLIT, $0-97
	MOVQ in_base+0(FP), DI
	MOVQ in_len+8(FP), CX
	MOVQ i0_base+24(FP), SI
	MOVQ i1_base+48(FP), R8
	MOVQ dst+72(FP), DX
	MOVQ d+88(FP), AX
	LOADDIMS
	SHRQ $2, CX
	JZ   sok

sloop:
	OFFSETS(sbad)
	VCVTPD2PSY (DI), X5
	VMOVSS     X5, (DX)(R9*4)
	VEXTRACTPS $1, X5, (DX)(R10*4)
	VEXTRACTPS $2, X5, (DX)(R11*4)
	VEXTRACTPS $3, X5, (DX)(R12*4)
	ADDQ       $32, SI
	ADDQ       $32, R8
	ADDQ       $32, DI
	DECQ       CX
	JNZ        sloop

sok:
	VZEROUPPER
	MOVB $1, ret+96(FP)
	RET

sbad:
	VZEROUPPER
	MOVB $0, ret+96(FP)
	RET
