package ci

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/flipbench/flipbench/cmd/flipbench/cli"
)

// decode reads every YAML document of path into a new T each, refusing fields T does not
// name (a misspelt key is an error, not a field CI ignores).
func decode[T any](t *testing.T, path string) []T {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var out []T
	for {
		var v T
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
}

// workflow is the part of a GitHub Actions workflow the example uses.
type workflow struct {
	Name string `yaml:"name"`
	On   struct {
		WorkflowDispatch struct {
			Inputs map[string]struct {
				Description string `yaml:"description"`
				Required    bool   `yaml:"required"`
				Default     string `yaml:"default"`
			} `yaml:"inputs"`
		} `yaml:"workflow_dispatch"`
	} `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Env         map[string]string `yaml:"env"`
	Jobs        map[string]job    `yaml:"jobs"`
}

// job is one job of a workflow.
type job struct {
	Needs          string `yaml:"needs"`
	If             string `yaml:"if"`
	RunsOn         string `yaml:"runs-on"`
	TimeoutMinutes int    `yaml:"timeout-minutes"`
	Strategy       *struct {
		FailFast *bool            `yaml:"fail-fast"`
		Matrix   map[string][]int `yaml:"matrix"`
	} `yaml:"strategy"`
	Steps []step `yaml:"steps"`
}

// step is one step of a job.
type step struct {
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	If   string            `yaml:"if"`
	With map[string]string `yaml:"with"`
}

// TestGitHubWorkflow checks the shard workflow: a build job, a matrix of shards 1..SHARDS
// that each run ab --shard i/SHARDS, and a merge job after them that runs even when a
// shard failed and downloads every shard's artifact.
func TestGitHubWorkflow(t *testing.T) {
	docs := decode[workflow](t, "github-shards.yml")
	if len(docs) != 1 {
		t.Fatalf("%d documents, want 1", len(docs))
	}
	w := docs[0]
	if w.Name == "" || len(w.On.WorkflowDispatch.Inputs) == 0 {
		t.Errorf("want a name and workflow_dispatch inputs")
	}
	for _, name := range []string{"build", "shard", "merge"} {
		j, ok := w.Jobs[name]
		if !ok {
			t.Fatalf("no %s job", name)
		}
		if j.RunsOn == "" || len(j.Steps) == 0 || j.TimeoutMinutes == 0 {
			t.Errorf("job %s: want runs-on, steps and timeout-minutes", name)
		}
		for i, s := range j.Steps {
			if (s.Uses == "") == (s.Run == "") {
				t.Errorf("job %s, step %d: want one of uses and run", name, i)
			}
			if s.Uses != "" && !regexp.MustCompile(`^[\w.-]+/[\w.-]+@v\d+$`).MatchString(s.Uses) {
				t.Errorf("job %s, step %d: uses %q: want owner/action@vN", name, i, s.Uses)
			}
			if s.Run != "" {
				checkShell(t, "job "+name, s.Run)
				checkCommands(t, "job "+name, s.Run)
			}
		}
	}
	shard, merge := w.Jobs["shard"], w.Jobs["merge"]
	n, err := strconv.Atoi(w.Env["SHARDS"])
	if err != nil {
		t.Fatalf("env SHARDS %q: %v", w.Env["SHARDS"], err)
	}
	if shard.Needs != "build" || shard.Strategy == nil || shard.Strategy.FailFast == nil || *shard.Strategy.FailFast {
		t.Fatalf("shard job: want needs build and a matrix strategy with fail-fast false")
	}
	if m := shard.Strategy.Matrix["shard"]; len(m) != n || !slices.IsSorted(m) || m[0] != 1 || m[n-1] != n {
		t.Errorf("shard matrix %v: want 1 to SHARDS (%d)", m, n)
	}
	if !slices.ContainsFunc(shard.Steps, func(s step) bool {
		return strings.Contains(s.Run, `--shard "${{ matrix.shard }}/$SHARDS"`) && strings.Contains(s.Run, "--arms arms.json")
	}) {
		t.Errorf("shard job: no step runs ab --shard \"${{ matrix.shard }}/$SHARDS\" --arms arms.json")
	}
	if merge.Needs != "shard" || !strings.Contains(merge.If, "!cancelled()") {
		t.Errorf("merge job: needs %q, if %q: want needs shard and if !cancelled()", merge.Needs, merge.If)
	}
	var downloads, merges bool
	for _, s := range merge.Steps {
		downloads = downloads || strings.HasPrefix(s.Uses, "actions/download-artifact@") && s.With["pattern"] == "shard-*" && s.With["merge-multiple"] == "true"
		merges = merges || strings.Contains(s.Run, "bin/flipbench merge ")
	}
	if !downloads || !merges {
		t.Errorf("merge job: want a download of every shard-* artifact into one folder and a flipbench merge")
	}
}

// object is the part of a Kubernetes object the manifests use.
type object struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		// PersistentVolumeClaim
		AccessModes []string `yaml:"accessModes"`
		Resources   struct {
			Requests map[string]string `yaml:"requests"`
		} `yaml:"resources"`
		// Job
		CompletionMode       string `yaml:"completionMode"`
		Completions          int    `yaml:"completions"`
		Parallelism          int    `yaml:"parallelism"`
		BackoffLimit         *int   `yaml:"backoffLimit"`
		BackoffLimitPerIndex *int   `yaml:"backoffLimitPerIndex"`
		MaxFailedIndexes     *int   `yaml:"maxFailedIndexes"`
		Template             struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec struct {
				RestartPolicy string    `yaml:"restartPolicy"`
				Affinity      yaml.Node `yaml:"affinity"`
				Containers    []struct {
					Name       string `yaml:"name"`
					Image      string `yaml:"image"`
					WorkingDir string `yaml:"workingDir"`
					Env        []struct {
						Name  string `yaml:"name"`
						Value string `yaml:"value"`
					} `yaml:"env"`
					Command   []string `yaml:"command"`
					Args      []string `yaml:"args"`
					Resources struct {
						Requests map[string]string `yaml:"requests"`
						Limits   map[string]string `yaml:"limits"`
					} `yaml:"resources"`
					VolumeMounts []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
				Volumes []struct {
					Name                  string `yaml:"name"`
					PersistentVolumeClaim struct {
						ClaimName string `yaml:"claimName"`
					} `yaml:"persistentVolumeClaim"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// TestKubernetesIndexedJob checks the Indexed Job: completions shards, each pod running
// ab --shard with its index from JOB_COMPLETION_INDEX, the receipts on the claim the
// manifest makes; and the merge Job, reading that claim.
func TestKubernetesIndexedJob(t *testing.T) {
	objs := decode[object](t, "k8s-indexed-job.yaml")
	merges := decode[object](t, "k8s-merge-job.yaml")
	var claim string
	var shards *object
	for i := range objs {
		o := &objs[i]
		switch {
		case o.APIVersion == "v1" && o.Kind == "PersistentVolumeClaim":
			claim = o.Metadata.Name
		case o.APIVersion == "batch/v1" && o.Kind == "Job":
			shards = o
		default:
			t.Errorf("unexpected %s %s", o.APIVersion, o.Kind)
		}
	}
	if claim == "" || shards == nil {
		t.Fatalf("want a PersistentVolumeClaim and a Job")
	}
	s := shards.Spec
	if s.CompletionMode != "Indexed" || s.Completions < 1 || s.Parallelism < 1 || s.Parallelism > s.Completions {
		t.Errorf("job: completionMode %q, completions %d, parallelism %d: want Indexed, completions >= 1, 1 <= parallelism <= completions",
			s.CompletionMode, s.Completions, s.Parallelism)
	}
	checkPod(t, "job "+shards.Metadata.Name, shards, claim)
	c := s.Template.Spec.Containers[0]
	script := strings.Join(c.Args, "\n")
	if !strings.Contains(script, "$((JOB_COMPLETION_INDEX + 1))") || !strings.Contains(script, "--shard \"$i/$SHARDS\"") {
		t.Errorf("shard pod: want the shard index from JOB_COMPLETION_INDEX in --shard, got %q", script)
	}
	if env := envOf(c.Env); env["SHARDS"] != strconv.Itoa(s.Completions) {
		t.Errorf("shard pod: SHARDS %q, completions %d: want them equal", env["SHARDS"], s.Completions)
	}
	if c.Resources.Requests["cpu"] == "" || c.Resources.Requests["cpu"] != c.Resources.Limits["cpu"] {
		t.Errorf("shard pod: cpu requests %q, limits %q: want them set and equal (Guaranteed)", c.Resources.Requests["cpu"], c.Resources.Limits["cpu"])
	}
	if len(merges) != 1 || merges[0].Kind != "Job" || merges[0].APIVersion != "batch/v1" {
		t.Fatalf("k8s-merge-job.yaml: want one batch/v1 Job")
	}
	m := &merges[0]
	checkPod(t, "job "+m.Metadata.Name, m, claim)
	mc := m.Spec.Template.Spec.Containers[0]
	if !strings.Contains(strings.Join(mc.Args, " "), "bin/flipbench merge ") {
		t.Errorf("merge pod: want flipbench merge, got %q", mc.Args)
	}
	if envOf(mc.Env)["RUN"] != envOf(c.Env)["RUN"] {
		t.Errorf("merge pod: RUN %q, shard pods %q: want one run", envOf(mc.Env)["RUN"], envOf(c.Env)["RUN"])
	}
}

// checkPod checks a Job's pod: never restarted in place, one container with an image
// pinned by digest and a shell script, and the receipts volume on the claim.
func checkPod(t *testing.T, what string, o *object, claim string) {
	t.Helper()
	ps := o.Spec.Template.Spec
	if ps.RestartPolicy != "Never" || len(ps.Containers) != 1 {
		t.Fatalf("%s: restartPolicy %q, %d containers: want Never and one", what, ps.RestartPolicy, len(ps.Containers))
	}
	c := ps.Containers[0]
	if !regexp.MustCompile(`@sha256:[0-9a-f]{64}$`).MatchString(c.Image) {
		t.Errorf("%s: image %q: pin it by digest, so every pod runs the same binaries", what, c.Image)
	}
	if !slices.Equal(c.Command, []string{"sh", "-c"}) || len(c.Args) != 1 {
		t.Fatalf("%s: want command [sh -c] and one script argument", what)
	}
	checkShell(t, what, c.Args[0])
	checkCommands(t, what, c.Args[0])
	if len(c.VolumeMounts) != 1 || len(ps.Volumes) != 1 || c.VolumeMounts[0].Name != ps.Volumes[0].Name || ps.Volumes[0].PersistentVolumeClaim.ClaimName != claim {
		t.Errorf("%s: want the receipts volume mounted from claim %s", what, claim)
	}
}

func envOf(env []struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}) map[string]string {
	out := map[string]string{}
	for _, e := range env {
		out[e.Name] = e.Value
	}
	return out
}

// checkShell checks that a script parses as POSIX shell (sh -n), with GitHub's
// ${{ ... }} expressions replaced by a word.
func checkShell(t *testing.T, what, script string) {
	t.Helper()
	script = regexp.MustCompile(`\$\{\{[^}]*\}\}`).ReplaceAllString(script, "X")
	out, err := exec.Command("sh", "-n", "-c", script).CombinedOutput()
	if err != nil {
		t.Errorf("%s: the script does not parse as sh: %v: %s\n%s", what, err, out, script)
	}
}

// checkCommands checks every flipbench command of a script: its verb exists and each
// --flag it passes is one of that verb's.
func checkCommands(t *testing.T, what, script string) {
	t.Helper()
	script = strings.ReplaceAll(script, "\\\n", " ")
	for _, m := range regexp.MustCompile(`bin/flipbench (\w+)([^\n|>]*)`).FindAllStringSubmatch(script, -1) {
		verb, rest := m[1], m[2]
		var out bytes.Buffer
		if code := cli.Main([]string{verb, "--help"}, cli.Streams{In: strings.NewReader(""), Out: &out, Err: &out}); code != 0 {
			t.Errorf("%s: flipbench %s: no such command (%s)", what, verb, strings.TrimSpace(out.String()))
			continue
		}
		for _, f := range regexp.MustCompile(`(?:^|\s)(--[a-z-]+)`).FindAllStringSubmatch(rest, -1) {
			if !regexp.MustCompile(`(?m)^\s+(-\w, )?` + regexp.QuoteMeta(f[1]) + `\b`).MatchString(out.String()) {
				t.Errorf("%s: flipbench %s %s: not a flag of flipbench %s", what, verb, f[1], verb)
			}
		}
	}
}
