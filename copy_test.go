package bitwire

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCodecCopyIsDeep(t *testing.T) {
	c := MustFor[CubeWorld]()
	src := makeWorld(rand.New(rand.NewSource(9)), 20)
	var dst CubeWorld
	c.Copy(&dst, &src)
	require.Equal(t, src, dst)
	require.NotSame(t, &src.Cubes[0], &dst.Cubes[0])
	want := cloneWorld(dst)
	src.Cubes[3].Pos.X = 7
	src.Cubes = append(src.Cubes[:5], src.Cubes[6:]...)
	require.Equal(t, want, dst)
	// copying again reuses dst's storage
	keep := &dst.Cubes[0]
	c.Copy(&dst, &src)
	require.Equal(t, src, dst)
	require.Same(t, keep, &dst.Cubes[0])
	c.Copy(&dst, &dst)
	c.Copy(nil, &src)
	require.Equal(t, src, dst)
}
