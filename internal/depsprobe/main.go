//go:build deps

package main
import (
 _ "github.com/go-git/go-git/v5"
 _ "github.com/zeebo/blake3"
 _ "github.com/urfave/cli/v2"
 _ "github.com/yuin/goldmark"
 _ "gopkg.in/yaml.v3"
 _ "golang.org/x/text/unicode/norm"
 _ "github.com/gofrs/flock"
 _ "golang.org/x/sys/unix"
)
func main(){}
