// Command conformance-tool is the helper of hack/conformance.sh:
//
//	conformance-tool images --registry 127.0.0.1:5000 --bash ... --agnhost ... [--list]
//	    builds the offline stand-ins of the e2e test images and pushes them (prints "REF DIGEST")
//	conformance-tool summary --junit FILE --node NAME [--focus RE --skip RE]
//	    prints the tally of one JUnit report (passed, failed, skipped, failed spec names)
//	conformance-tool compare --vk FILE --ref FILE [--vk-name N --ref-name N] [--vk-focus RE --vk-skip RE --ref-focus RE --ref-skip RE]
//	    prints both tallies side by side and the specs that pass on REF but not on VK
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "images":
		err = cmdImages(os.Args[2:])
	case "summary":
		err = cmdSummary(os.Args[2:])
	case "compare":
		err = cmdCompare(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance-tool:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: conformance-tool images|summary|compare [flags]")
	os.Exit(2)
}
