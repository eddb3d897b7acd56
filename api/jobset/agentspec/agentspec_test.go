package agentspec

import "testing"

// Agents already running in users' Pods, manifests users wrote by hand and
// community JobSet's tooling use these values: changing one is a breaking
// change of the wire contract, never a refactoring.
func TestWireValuesAreStable(t *testing.T) {
	for name, tc := range map[string]struct{ got, want any }{
		"epoch annotation":      {EpochAnnotation, "jobset.sigs.k8s.io/epoch"},
		"jobset-name key":       {JobSetNameKey, "jobset.sigs.k8s.io/jobset-name"},
		"group/version":         {Group + "/" + Version, "jobset.x-k8s.io/v1alpha2"},
		"namespace env":         {EnvNamespace, "NAMESPACE"},
		"pod name env":          {EnvPodName, "POD_NAME"},
		"jobset name env":       {EnvJobSetName, "JOBSET_NAME"},
		"restart exit code env": {EnvRestartExitCode, "RESTART_POD_IN_PLACE_EXIT_CODE"},
		"restart exit code":     {DefaultRestartExitCode, 88},
		"barrier port":          {DefaultBarrierPort, 8080},
		"barrier path":          {DefaultBarrierPath, "/barrier-is-lifted"},
		"config error exit":     {ExitConfigError, 2},
		"fatal exit":            {ExitFatal, 3},
		"token mount path":      {TokenMountPath, "/var/run/secrets/kubernetes.io/serviceaccount"},
		"wrapper control env":   {EnvWrapperControl, "JOBSET_WRAPPER_CONTROL"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", name, tc.got, tc.want)
		}
	}
	for _, env := range RequiredEnv {
		if FieldPathOf[env] == "" {
			t.Errorf("required variable %s has no downward API field", env)
		}
	}
}
