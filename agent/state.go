package agent

// Action is what the agent does after seeing a JobSet status.
type Action int

const (
	// Wait: nothing to do until the status changes.
	Wait Action = iota
	// Join: patch the Pod's epoch annotation to Status.Synced + 1.
	Join
	// Restart: exit with the restart code.
	Restart
	// Lift: lift the barrier (idempotent).
	Lift
)

func (a Action) String() string {
	return [...]string{"Wait", "Join", "Restart", "Lift"}[a]
}

// Epochs is the part of the JobSet status the agent reads (absent = 0).
type Epochs struct {
	Synced, Deprecated int32
}

// Next decides, from the agent's epoch (0 until it joined) and the JobSet's
// epochs, what the agent does.
func Next(epoch int32, status Epochs) Action {
	switch {
	case epoch == 0:
		return Join
	case epoch <= status.Deprecated:
		return Restart
	case epoch == status.Synced:
		return Lift
	default:
		return Wait
	}
}
