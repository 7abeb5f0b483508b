package bench

import "testing"

// BenchmarkEncode/<workload>/<serializer> and BenchmarkDecode/<workload>/<serializer>
// measure every subject of every workload; B/msg is the encoded size. Run them
// with bench/run.sh, which repeats them and writes docs/BENCHMARKS.md.

func BenchmarkEncode(b *testing.B) {
	for _, w := range Workloads() {
		b.Run(w.Name, func(b *testing.B) {
			for _, s := range w.Subjects {
				b.Run(s.Name, func(b *testing.B) {
					data, err := s.Encode()
					if err != nil {
						b.Fatal(err)
					}
					n := len(data)
					b.ReportAllocs()
					b.ResetTimer()
					for b.Loop() {
						if _, err := s.Encode(); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(n), "B/msg")
				})
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, w := range Workloads() {
		b.Run(w.Name, func(b *testing.B) {
			for _, s := range w.Subjects {
				b.Run(s.Name, func(b *testing.B) {
					enc, err := s.Encode()
					if err != nil {
						b.Fatal(err)
					}
					data := append([]byte(nil), enc...)
					if err := s.Decode(data); err != nil {
						b.Fatal(err)
					}
					b.ReportAllocs()
					b.ResetTimer()
					for b.Loop() {
						if err := s.Decode(data); err != nil {
							b.Fatal(err)
						}
					}
					b.StopTimer()
					if err := s.Check(); err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(len(data)), "B/msg")
				})
			}
		})
	}
}
