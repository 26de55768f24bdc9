package receipt

// Role is what a lane is for in the decision rule (spec.Lane.Role, recorded in the plan's
// lanes): the lanes the change is for, lanes only reported, lanes that must not get
// slower, and lanes that must not change.
type Role string

// Lane roles.
const (
	RolePrimary   Role = "primary"
	RoleSecondary Role = "secondary"
	RoleGuard     Role = "guard"
	RoleControl   Role = "control"
)
