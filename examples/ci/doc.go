// Package ci holds examples of running one experiment on many machines (docs/shards.md):
// a GitHub Actions workflow with a matrix of shards and a merge job (github-shards.yml),
// and a Kubernetes Indexed Job with its merge Job (k8s-indexed-job.yaml,
// k8s-merge-job.yaml). It has no code; its test parses the files with their required
// fields and checks that every flipbench command they run uses flags flipbench has.
package ci
