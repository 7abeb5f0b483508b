package fields_test

import (
	"fmt"

	"github.com/bitwire/bitwire/fields"
)

// CheckCode tells whether code lengths make a prefix code, without
// building the code: a file of many tables can be checked when it is
// loaded and its codes built when they are used.
func ExampleCheckCode() {
	fmt.Println(fields.CheckCode([]uint8{1, 2, 2})) // 1/2 + 1/4 + 1/4: complete
	fmt.Println(fields.CheckCode([]uint8{1, 1, 2})) // over-subscribed
	fmt.Println(fields.CheckCode([]uint8{3, 0, 3})) // incomplete is fine; 0: no codeword
	// Output:
	// <nil>
	// bitwire: bad code lengths
	// <nil>
}
