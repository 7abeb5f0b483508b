package bench

// tinylib/msgp is a peer through the code its generator writes for the
// workloads' structs (msgp_workloads_gen.go and msgp_delta_gen.go, by
// gen.sh, from the msgp:tuple directives in workloads.go and
// snapshot_delta.go): MessagePack with each struct as an array of its
// fields, appended to a reused buffer and decoded into a reused value.

type msgpMessage interface {
	MarshalMsg(b []byte) ([]byte, error)
	UnmarshalMsg(bts []byte) ([]byte, error)
}

func msgpCodec[T any, P interface {
	*T
	msgpMessage
}]() codecOf[T] {
	return codecOf[T]{
		Append: func(dst []byte, v *T) ([]byte, error) { return P(v).MarshalMsg(dst) },
		Read: func(data []byte, v *T) error {
			_, err := P(v).UnmarshalMsg(data)
			return err
		},
	}
}

func init() {
	registerAppenders("msgp", appenders{
		Person: msgpCodec[Person](), Player: msgpCodec[PlayerState](), Snapshot: msgpCodec[Snapshot](),
		Delta: msgpCodec[DeltaSnapshot](), World: msgpCodec[World](),
	})
}
