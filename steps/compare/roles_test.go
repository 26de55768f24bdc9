package compare

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flipbench/flipbench/model/spec"
)

func TestRolesApply(t *testing.T) {
	lanes := []spec.Lane{{Name: "Tokenize"}, {Name: "Count"}, {Name: "Parse/small"}, {Name: "Parse/large"}}
	for _, tt := range []struct {
		name    string
		roles   Roles
		want    []spec.Lane
		wantErr string
	}{
		{name: "primary and guard, the rest secondary", roles: Roles{Primary: "Tokenize", Guard: "Count"},
			want: []spec.Lane{{Name: "Tokenize", Role: spec.RolePrimary, Expect: spec.ExpectFaster}, {Name: "Count", Role: spec.RoleGuard},
				{Name: "Parse/small", Role: spec.RoleSecondary}, {Name: "Parse/large", Role: spec.RoleSecondary}}},
		{name: "expect slower, a control over sub-benchmarks", roles: Roles{Primary: "^Count$", Expect: spec.ExpectSlower, Control: "Parse/"},
			want: []spec.Lane{{Name: "Tokenize", Role: spec.RoleSecondary}, {Name: "Count", Role: spec.RolePrimary, Expect: spec.ExpectSlower},
				{Name: "Parse/small", Role: spec.RoleControl}, {Name: "Parse/large", Role: spec.RoleControl}}},
		{name: "two roles for one lane", roles: Roles{Primary: "Parse", Guard: "large"}, wantErr: "lane Parse/large: both --primary and --guard match it; give each lane one role"},
		{name: "a role matching nothing", roles: Roles{Guard: "Nothing"}, wantErr: `--guard "Nothing" matches no lane (the lanes are Tokenize, Count, Parse/small, Parse/large)`},
		{name: "a bad expression", roles: Roles{Control: "("}, wantErr: "--control \"(\": error parsing regexp: missing closing ): `(`"},
		{name: "a bad expectation", roles: Roles{Primary: "Count", Expect: "quicker"}, wantErr: `--expect "quicker": want faster, slower or neutral`},
		{name: "expect without primary", roles: Roles{Guard: "Count", Expect: "neutral"}, wantErr: "--expect neutral: is the primaries' expectation; give --primary REGEX too"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.roles.Apply(lanes)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("roles (-want +got):\n%s", d)
			}
		})
	}
}
