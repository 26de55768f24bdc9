//go:build tools

// Package deps pins the chosen dependencies in go.mod before every one of them has an importer.
package deps

import (
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/olekukonko/tablewriter"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/spf13/cobra"
	_ "github.com/vbauerster/mpb/v8"
	_ "github.com/yuin/goldmark"
	_ "go.yaml.in/yaml/v3"
	_ "golang.org/x/perf/benchfmt"
	_ "golang.org/x/perf/benchmath"
	_ "gonum.org/v1/plot"
	_ "zombiezen.com/go/sqlite"
)
