//go:build !purego

#include "textflag.h"

// func diffAVX2(a, b *byte, n int) int
// The index of the first byte where the n bytes at a and b differ, or n
// when they are equal; n is a multiple of 64. Compares 128 bytes a step
// (four 32-byte compares, one mask test), then a last 64 bytes.
TEXT ·diffAVX2(SB), NOSPLIT, $0-32
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), BX
	XORQ AX, AX
	MOVQ BX, CX
	SUBQ $128, CX // the last start of a 128-byte step
	JL   last

loop128:
	VMOVDQU   (SI)(AX*1), Y0
	VMOVDQU   32(SI)(AX*1), Y1
	VMOVDQU   64(SI)(AX*1), Y2
	VMOVDQU   96(SI)(AX*1), Y3
	VPCMPEQB  (DI)(AX*1), Y0, Y0
	VPCMPEQB  32(DI)(AX*1), Y1, Y1
	VPCMPEQB  64(DI)(AX*1), Y2, Y2
	VPCMPEQB  96(DI)(AX*1), Y3, Y3
	VPAND     Y0, Y1, Y4
	VPAND     Y2, Y3, Y5
	VPAND     Y4, Y5, Y5
	VPMOVMSKB Y5, DX
	CMPL      DX, $0xffffffff
	JNE       found
	ADDQ      $128, AX
	CMPQ      AX, CX
	JLE       loop128

last:
	CMPQ AX, BX
	JAE  done
	VMOVDQU   (SI)(AX*1), Y0
	VMOVDQU   32(SI)(AX*1), Y1
	VPCMPEQB  (DI)(AX*1), Y0, Y0
	VPCMPEQB  32(DI)(AX*1), Y1, Y1
	VPAND     Y0, Y1, Y4
	VPMOVMSKB Y4, DX
	CMPL      DX, $0xffffffff
	JNE       found
	ADDQ      $64, AX
	JMP       done

found: // a 32-byte half or quarter in Y0 to Y3 holds the difference
	VPMOVMSKB Y0, DX
	NOTL      DX
	TESTL     DX, DX
	JNZ       place
	ADDQ      $32, AX
	VPMOVMSKB Y1, DX
	NOTL      DX
	TESTL     DX, DX
	JNZ       place
	ADDQ      $32, AX
	VPMOVMSKB Y2, DX
	NOTL      DX
	TESTL     DX, DX
	JNZ       place
	ADDQ      $32, AX
	VPMOVMSKB Y3, DX
	NOTL      DX

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
