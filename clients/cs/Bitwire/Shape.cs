// A message's fields and codings, generated per codec, for the runtime's
// walks over values by reflection (Conn.cs, Interp.cs).

namespace Bitwire
{
    /// <summary>
    /// A message's fields and codings as its schema gives them (generated:
    /// the codec class's Shape), for the runtime's walks over values by
    /// reflection (Conn.cs: the paths of ReplicaEvents). Coding is the
    /// schema's; a struct has Fields in wire order; an array, slice or
    /// pointer its Elem, a map its Elem and Key; Id is an entity set's id
    /// field (an index in Elem.Fields), -1 otherwise.
    /// </summary>
    public sealed class Shape
    {
        public readonly string Coding;
        public ShapeField[] Fields;
        public readonly Shape Elem, Key;
        public readonly int Id;
        public Shape(string coding, Shape elem = null, Shape key = null, int id = -1) { Coding = coding; Elem = elem; Key = key; Id = id; }
    }

    /// <summary>One encoded field of a struct Shape: its name, its reflection handle and its coding.</summary>
    public sealed class ShapeField
    {
        public readonly string Name;
        public readonly System.Reflection.FieldInfo Info;
        public readonly Shape Node;
        public ShapeField(string name, System.Reflection.FieldInfo info, Shape node) { Name = name; Info = info; Node = node; }
    }
}
