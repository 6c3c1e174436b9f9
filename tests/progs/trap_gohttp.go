// SPDX-License-Identifier: MIT
//
// A tiny net/http file server for the trap path (tests/integration/122_*):
// Go makes its own system calls, so only the trap path can offload it.
//
//	trap-gohttp PORT DIR    serve DIR; prints "listening PORT" once it listens
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: trap-gohttp PORT DIR")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", ":"+os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "trap-gohttp:", err)
		os.Exit(1)
	}
	fmt.Printf("listening %s\n", os.Args[1])
	if err := http.Serve(ln, http.FileServer(http.Dir(os.Args[2]))); err != nil {
		fmt.Fprintln(os.Stderr, "trap-gohttp:", err)
		os.Exit(1)
	}
}
