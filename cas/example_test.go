package cas

import (
	"fmt"
	"os"
	"path/filepath"
)

// exampleDirs are removed by TestMain after the examples ran.
var exampleDirs []string

// exampleDir returns a fresh .prose directory for an example.
func exampleDir() string {
	dir, err := os.MkdirTemp("", "cas-example-")
	if err != nil {
		panic(err)
	}
	exampleDirs = append(exampleDirs, dir)
	return filepath.Join(dir, ".prose")
}

func Example() {
	s, err := Open(exampleDir())
	if err != nil {
		fmt.Println(err)
		return
	}
	id, err := s.PutBytes([]byte("hello, world\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(id)
	data, err := s.ReadAll(id)
	fmt.Printf("%q %v\n", data, err)
	// Output:
	// blake3:623a5460d841b6d1c13d080e85500e0043fd4ba4a8ba9c1aa9b4f6e0d212276c
	// "hello, world\n" <nil>
}
