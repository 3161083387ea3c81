#include "textflag.h"

// callFrame is entered from runtime.asmcgocall on the system stack, as a C
// function of one argument: DI points at a cframe {fn, a[11]}, which it
// only reads. The callee's result stays in AX, which asmcgocall hands back
// to runtime.cgocall as its int32 result. The
// stack is 16-byte aligned before asmcgocall's CALL, so it is 8 off here;
// a 56-byte frame (five stack arguments, the saved BX, padding) brings it
// back to 16 for the call into C. BX is callee-saved in the System V ABI,
// so it is restored before returning.
TEXT callFrame<>(SB), NOSPLIT|NOFRAME, $0
	SUBQ $56, SP
	MOVQ BX, 40(SP)
	MOVQ DI, BX
	MOVQ 56(BX), AX // a[6..10] go on the stack
	MOVQ AX, 0(SP)
	MOVQ 64(BX), AX
	MOVQ AX, 8(SP)
	MOVQ 72(BX), AX
	MOVQ AX, 16(SP)
	MOVQ 80(BX), AX
	MOVQ AX, 24(SP)
	MOVQ 88(BX), AX
	MOVQ AX, 32(SP)
	MOVQ 8(BX), DI // a[0..5] in registers
	MOVQ 16(BX), SI
	MOVQ 24(BX), DX
	MOVQ 32(BX), CX
	MOVQ 40(BX), R8
	MOVQ 48(BX), R9
	MOVQ 0(BX), R10
	XORL AX, AX // no vector registers used (variadic callees read AL)
	CALL R10
	MOVQ 40(SP), BX
	ADDQ $56, SP
	RET

DATA ·callFrameABI0+0(SB)/8, $callFrame<>(SB)
GLOBL ·callFrameABI0(SB), RODATA, $8
