// llmchaos-go-client NAME: one example client (internal/clients), run by `llmchaos run --driver exec`
// once per request; `llmchaos-go-client --list` prints each client with the module version it was built
// with (examples/run-target-suites labels its reports with them).
package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"llmchaos.example/goclients/internal/chaos"
	"llmchaos.example/goclients/internal/clients"
)

func moduleVersion(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return "(unknown)"
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: llmchaos-go-client NAME | --list")
		os.Exit(2)
	}
	if os.Args[1] == "--list" {
		for _, c := range clients.All {
			fmt.Printf("%s\t%s\t%s %s\n", c.Name, c.Dialect, c.Module, moduleVersion(c.Module))
		}
		return
	}
	for _, c := range clients.All {
		if c.Name != os.Args[1] {
			continue
		}
		env, err := chaos.ReadEnv(os.LookupEnv)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(c.Run(env, os.Stdout, os.Stderr))
	}
	fmt.Fprintf(os.Stderr, "llmchaos-go-client: no client %q (--list shows them)\n", os.Args[1])
	os.Exit(2)
}
