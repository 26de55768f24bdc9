package lanekind

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// unknownPlaceholders reports the placeholders of template that are not in known, each at
// its argument ("command[2]").
func unknownPlaceholders(field string, template, known []string) []Problem {
	var ps []Problem
	re := regexp.MustCompile(`\{[A-Za-z_]+\}`)
	for i, arg := range template {
		for _, p := range re.FindAllString(arg, -1) {
			if !slices.Contains(known, p) {
				ps = append(ps, Problem{fmt.Sprintf("%s[%d]", field, i), fmt.Sprintf("unknown placeholder %s (known: %s)", p, strings.Join(known, ", "))})
			}
		}
	}
	return ps
}
