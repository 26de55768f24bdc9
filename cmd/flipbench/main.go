// Command flipbench runs performance experiments that can be trusted: order-flipped,
// lane-isolated A/B runs with a drift check, receipts and an experiment ledger.
package main

import (
	"os"

	"github.com/flipbench/flipbench/cmd/flipbench/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], cli.StdStreams())) }
