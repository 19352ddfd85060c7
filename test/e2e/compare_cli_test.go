//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// compareCLIScenario is a scenario that keeps its pod running for minutes: long enough to be
// interrupted while it runs, and short enough to finish on its own when it is not.
const compareCLIScenario = `name: sleeper
category: lifecycle
description: A pod that runs until the scenario's wait times out.
pods:
  - apiVersion: v1
    kind: Pod
    metadata: {name: main}
    spec:
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 1
      containers:
        - name: c
          image: 127.0.0.1:5000/vk-cri/busybox:latest
          command: [sh, -c, 'echo started; sleep 3600']
steps:
  - wait: {pod: main, for: Running, timeout: 60s}
  - wait: {pod: main, for: Succeeded, timeout: 120s}
`

func compareCLI(ctx context.Context, t *testing.T, dir, scenario string, extra ...string) *exec.Cmd {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "sleeper.yaml"), []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	// Both sides on the test's node: the interruption and the reports are what is tested here.
	args := append([]string{"compare", "--kubeconfig", s.env["KUBECONFIG"], "--node-a", nodeName, "--node-b", nodeName,
		"--scenarios", dir}, extra...)
	return exec.CommandContext(ctx, filepath.Join(s.repo, "bin/vk-cri"), args...)
}

// An interrupted compare run exits 2 ("could not compare") and deletes the namespaces it made.
func TestCompareInterruptedLeavesNoNamespace(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	out := filepath.Join(dir, "result.json")
	cmd := compareCLI(ctx, t, dir, compareCLIScenario, "--out", out)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	sel := metav1.ListOptions{LabelSelector: "vk-cri.io/compare=sleeper"}
	// Interrupt once both sides' pods run.
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-exited:
			return false, fmt.Errorf("compare exited before it was interrupted: %v", err)
		default:
		}
		nss, err := s.kube.CoreV1().Namespaces().List(ctx, sel)
		if err != nil || len(nss.Items) != 2 {
			return false, nil
		}
		for _, ns := range nss.Items {
			pods, err := s.kube.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{})
			if err != nil || len(pods.Items) != 1 || pods.Items[0].Status.Phase != "Running" {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("the scenario's pods did not run: %v\n%s", err, stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err = <-exited
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Errorf("interrupted compare: %v, want exit status 2\n%s", err, stderr.String())
	}
	// Every namespace it made is gone or going (deletion started) by the time it exited.
	nss, err := s.kube.CoreV1().Namespaces().List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range nss.Items {
		if ns.DeletionTimestamp == nil {
			t.Errorf("namespace %s left behind by the interrupted run", ns.Name)
		}
	}
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		nss, err := s.kube.CoreV1().Namespaces().List(ctx, sel)
		return err == nil && len(nss.Items) == 0, nil
	}); err != nil {
		t.Errorf("the interrupted run's namespaces were not removed: %v", err)
	}
}

// A finished run writes the JSON, HTML and JUnit forms, and "compare report" makes the same
// HTML again from the JSON.
func TestCompareWritesReports(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	dir := t.TempDir()
	// A short scenario: the pod runs, then exits 0.
	quick := strings.Replace(strings.Replace(compareCLIScenario, "sleep 3600", "sleep 2", 1), "timeout: 120s", "timeout: 60s", 1)
	cmd := compareCLI(ctx, t, dir, quick,
		"--out", filepath.Join(dir, "r.json"), "--html", filepath.Join(dir, "r.html"), "--junit", filepath.Join(dir, "r.xml"))
	outBytes, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("compare: %v\n%s", err, outBytes)
	}
	var res struct {
		Summary struct{ Ran, Matching int } `json:"summary"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if res.Summary.Ran != 1 || res.Summary.Matching != 1 {
		t.Errorf("summary %+v, want 1 of 1 matching (the node against itself)", res.Summary)
	}
	for _, f := range []string{"r.html", "r.xml"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !bytes.Contains(b, []byte("matching 1/1 scenarios")) {
			t.Errorf("%s: %v, or it has no score line", f, err)
		}
	}
	again := filepath.Join(dir, "again.html")
	if b, err := exec.CommandContext(ctx, filepath.Join(s.repo, "bin/vk-cri"), "compare", "report", filepath.Join(dir, "r.json"), "--html", again).CombinedOutput(); err != nil {
		t.Fatalf("compare report: %v\n%s", err, b)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "r.html"))
	b, _ := os.ReadFile(again)
	if !bytes.Equal(a, b) {
		t.Errorf("compare report made another page from the saved result than the run did")
	}
}
