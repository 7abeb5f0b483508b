//go:build !purego

#include "textflag.h"

// func diffAVX2(a, b *byte, n int) int
// The index of the first byte where the n bytes at a and b differ, or n
// when they are equal; n is a multiple of 64. Compares 64 bytes a step.
TEXT ·diffAVX2(SB), NOSPLIT, $0-32
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), BX
	XORQ AX, AX
	CMPQ AX, BX
	JAE  done

loop:
	VMOVDQU   (SI)(AX*1), Y0
	VMOVDQU   32(SI)(AX*1), Y1
	VPCMPEQB  (DI)(AX*1), Y0, Y0
	VPCMPEQB  32(DI)(AX*1), Y1, Y1
	VPAND     Y0, Y1, Y2
	VPMOVMSKB Y2, DX
	CMPL      DX, $0xffffffff
	JNE       found
	ADDQ      $64, AX
	CMPQ      AX, BX
	JB        loop
	JMP       done

found:
	VPMOVMSKB Y0, DX
	NOTL      DX
	TESTL     DX, DX
	JNZ       place
	VPMOVMSKB Y1, DX
	NOTL      DX
	ADDQ      $32, AX

place:
	BSFL DX, DX
	ADDQ DX, AX

done:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

// func cpuAVX2() bool
// Whether the processor has AVX2 and the operating system saves the
// registers it uses (CPUID and XGETBV).
TEXT ·cpuAVX2(SB), NOSPLIT, $0-1
	XORL AX, AX
	XORL CX, CX
	CPUID
	CMPL AX, $7
	JB   no
	MOVL $1, AX
	XORL CX, CX
	CPUID
	ANDL $0x18000000, CX // OSXSAVE and AVX
	CMPL CX, $0x18000000
	JNE  no
	XORL CX, CX
	XGETBV
	ANDL $6, AX // the XMM and YMM states
	CMPL AX, $6
	JNE  no
	MOVL $7, AX
	XORL CX, CX
	CPUID
	BTL  $5, BX // AVX2
	JCC  no
	MOVB $1, ret+0(FP)
	RET

no:
	MOVB $0, ret+0(FP)
	RET
