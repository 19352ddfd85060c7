// Command imagecopy copies images between registries, as `crane copy` does: imagecopy
// [-insecure] SRC DST. Plain-http registries (the stack's loopback one) need -insecure.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/crane"
)

func main() {
	insecure := flag.Bool("insecure", false, "allow plain http and unverified TLS")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: imagecopy [-insecure] SRC DST")
		os.Exit(2)
	}
	var opts []crane.Option
	if *insecure {
		opts = append(opts, crane.Insecure)
	}
	if err := crane.Copy(flag.Arg(0), flag.Arg(1), opts...); err != nil {
		fmt.Fprintf(os.Stderr, "imagecopy: %s -> %s: %v\n", flag.Arg(0), flag.Arg(1), err)
		os.Exit(1)
	}
}
