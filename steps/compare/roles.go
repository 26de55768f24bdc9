package compare

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/flipbench/flipbench/model/spec"
)

// Roles give a comparison's lanes the roles a page pre-registers: Primary, Guard and
// Control are regular expressions matched (unanchored, as go test -bench matches one
// level) against each lane's full name ("Tokenize", "Alloc/size=64"); Expect is the
// primaries' predicted direction (faster, slower or neutral; faster when empty). A lane
// no expression matches is secondary: measured and shown, judged by no rule.
type Roles struct {
	Primary, Guard, Control string
	Expect                  string
}

// Set reports whether any role was given; a comparison without roles keeps its default
// (every lane a guard, or a primary expected faster on a saved page).
func (r Roles) Set() bool { return r.Primary != "" || r.Guard != "" || r.Control != "" }

// roleFlag is one role with the flag that names it.
type roleFlag struct {
	flag string
	role spec.Role
	expr string
}

func (r Roles) flags() []roleFlag {
	return []roleFlag{{"--primary", spec.RolePrimary, r.Primary}, {"--guard", spec.RoleGuard, r.Guard}, {"--control", spec.RoleControl, r.Control}}
}

// Check validates the expressions and the expectation, naming the flag at fault.
func (r Roles) Check() error {
	for _, f := range r.flags() {
		if f.expr == "" {
			continue
		}
		if _, err := regexp.Compile(f.expr); err != nil {
			return fmt.Errorf("%s %q: %v", f.flag, f.expr, err)
		}
	}
	if r.Expect != "" {
		if !slices.Contains([]string{spec.ExpectFaster, spec.ExpectSlower, spec.ExpectNeutral}, r.Expect) {
			return fmt.Errorf("--expect %q: want faster, slower or neutral", r.Expect)
		}
		if r.Primary == "" {
			return fmt.Errorf("--expect %s: is the primaries' expectation; give --primary REGEX too", r.Expect)
		}
	}
	return nil
}

// Apply returns lanes with their roles: the lanes Primary matches are primaries expected
// r.Expect, those Guard matches guards, those Control matches controls, the rest
// secondary. A lane two expressions match, and an expression that matches no lane, are
// errors naming the flags.
func (r Roles) Apply(lanes []spec.Lane) ([]spec.Lane, error) {
	if err := r.Check(); err != nil {
		return nil, err
	}
	expect := r.Expect
	if expect == "" {
		expect = spec.ExpectFaster
	}
	out := make([]spec.Lane, len(lanes))
	by := make([]string, len(lanes)) // the flag that gave each lane its role
	for _, f := range r.flags() {
		if f.expr == "" {
			continue
		}
		re := regexp.MustCompile(f.expr)
		var hit bool
		for i, l := range lanes {
			if !re.MatchString(l.Name) {
				continue
			}
			if by[i] != "" {
				return nil, fmt.Errorf("lane %s: both %s and %s match it; give each lane one role", l.Name, by[i], f.flag)
			}
			hit, by[i] = true, f.flag
			out[i] = spec.Lane{Name: l.Name, Role: f.role}
			if f.role == spec.RolePrimary {
				out[i].Expect = expect
			}
		}
		if !hit {
			return nil, fmt.Errorf("%s %q matches no lane (the lanes are %s)", f.flag, f.expr, laneList(lanes))
		}
	}
	for i, l := range lanes {
		if by[i] == "" {
			out[i] = spec.Lane{Name: l.Name, Role: spec.RoleSecondary}
		}
	}
	return out, nil
}

// laneList names lanes: "Get, Put".
func laneList(lanes []spec.Lane) string {
	names := make([]string, len(lanes))
	for i, l := range lanes {
		names[i] = l.Name
	}
	return strings.Join(names, ", ")
}
