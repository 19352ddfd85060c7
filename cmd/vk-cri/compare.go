package main

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"

	"github.com/vk-cri/vk-cri/compare"
)

type compareOptions struct {
	kubeconfig     string
	nodeA, nodeB   string
	scenarios      string
	run            string
	out            string
	html           string
	baseline       string
	recordRuns     int
	imageRegistry  string
	listImages     bool
	junit          string
	parallel       int
	retries        int
	onlyMatching   bool
	settle         time.Duration
	keepNamespaces bool
	check          bool
	logLevel       string
}

func newCompareCommand() *cobra.Command {
	o := &compareOptions{}
	cmd := &cobra.Command{
		Use:   "compare --node-a NODE --node-b NODE [--scenarios DIR] [--run REGEX] [--out FILE]",
		Short: "Run behaviour scenarios on two nodes at once and diff what happens",
		Long: `compare runs each scenario (YAML files under --scenarios, recursively) on two nodes at the
same time, each in a fresh namespace with its pods pinned to the node, records what happens
(status timelines from a watch, events, logs, exec outputs, deletion times), normalises away what
is volatile (times, UIDs, IPs, node names, namespaces, IDs) and diffs the two records.

Lines starting with "-" are node A's, lines starting with "+" node B's. With --only-matching,
scenarios marked "known" are skipped and only the others count. --html writes a self-contained
report (both nodes' timelines side by side, the differences highlighted), --junit JUnit XML; "vk-cri
compare report" makes both from a saved --out file.

Exit status: 0 when every scenario matched, 1 when a scenario differs (and every one could be
run), 2 when the comparison could not be made: a scenario could not be run on a node, the nodes
or the scenarios could not be read, or the run was interrupted.

--check only loads and validates the scenario files.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCompare(cmd, o)
		},
		SilenceUsage: true,
	}
	cmd.AddCommand(newCompareFlakesCommand(), newCompareReportCommand(), newCompareRecordCommand())
	f := cmd.Flags()
	addScenarioRunFlags(f, o)
	f.StringVar(&o.nodeA, "node-a", "", "node A (its lines are marked -)")
	f.StringVar(&o.nodeB, "node-b", "", "node B, the reference (its lines are marked +; on a retry its deletion times over the runs widen the deletion comparison)")
	f.StringVar(&o.out, "out", "", "write the whole result (both records and the diffs) as JSON to this file")
	f.StringVar(&o.baseline, "baseline", "", "compare node A with this baseline (made by 'vk-cri compare record') instead of running node B")
	f.BoolVar(&o.listImages, "list-images", false, "print the corpus images the selected scenarios use, then exit")
	f.StringVar(&o.html, "html", "", "write a self-contained HTML report to this file")
	f.StringVar(&o.junit, "junit", "", "write the outcome as JUnit XML to this file")
	f.IntVar(&o.retries, "retries", 0, "run a scenario that differs or cannot run up to this many more times before its outcome stands (earlier attempts are reported)")
	f.BoolVar(&o.keepNamespaces, "keep-namespaces", false, "do not delete the scenarios' namespaces (for debugging)")
	return cmd
}

// addScenarioRunFlags adds the flags of everything that runs scenarios on a cluster (compare
// and compare record).
func addScenarioRunFlags(f *pflag.FlagSet, o *compareOptions) {
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig with the rights to manage namespaces, pods, pods/exec, pods/log, events (default $KUBECONFIG)")
	f.StringVar(&o.scenarios, "scenarios", "test/compare", "directory of scenario files, searched recursively")
	f.StringVar(&o.run, "run", "", "only the scenarios whose category/name matches this regular expression")
	f.StringVar(&o.imageRegistry, "image-registry", "", "pull the corpus's images ("+compare.CorpusRegistry+"/...) from this registry instead (push them there with hack/compare-push-images.sh)")
	f.IntVar(&o.parallel, "parallel", 1, "scenarios run at once")
	f.BoolVar(&o.onlyMatching, "only-matching", false, "skip scenarios marked known; fail only if another one differs")
	f.DurationVar(&o.settle, "settle", 2*time.Second, "minimum time given to events to reach the API server before they are collected (longer while they keep coming, up to 5x)")
	f.BoolVar(&o.check, "check", false, "only load and validate the scenarios, then exit")
	f.StringVar(&o.logLevel, "log-level", "info", "progress log level on stderr (debug shows every step)")
}

// runCompare runs the comparison; every error it returns carries the exit status that tells
// "differs" (1) from "could not compare" (2).
func runCompare(cmd *cobra.Command, o *compareOptions) error {
	res, err := compareScenarios(cmd, o)
	if err != nil {
		return exitWith(exitCouldNotCompare, err)
	}
	if res == nil { // --check, --list-images
		return nil
	}
	if err := writeReports(res, o.out, o.html, o.junit, cmd.OutOrStdout()); err != nil {
		return exitWith(exitCouldNotCompare, err)
	}
	if cmd.Context().Err() != nil {
		return exitWith(exitCouldNotCompare, fmt.Errorf("interrupted: %w", cmd.Context().Err()))
	}
	if len(res.Summary.Errors) > 0 {
		return exitWith(exitCouldNotCompare, fmt.Errorf("%d scenarios could not be run (%s)", len(res.Summary.Errors), res.ScoreLine()))
	}
	if res.Failed() {
		return exitWith(exitDiffers, fmt.Errorf("scenarios differ (%s)", res.ScoreLine()))
	}
	return nil
}

// compareScenarios loads the scenarios and runs them on both nodes (nil result: --check).
func compareScenarios(cmd *cobra.Command, o *compareOptions) (*compare.Result, error) {
	all, err := compare.LoadDir(o.scenarios)
	if err != nil {
		return nil, err
	}
	var re *regexp.Regexp
	if o.run != "" {
		if re, err = regexp.Compile(o.run); err != nil {
			return nil, fmt.Errorf("--run: %w", err)
		}
	}
	selected := compare.Select(all, re)
	if len(selected) == 0 {
		return nil, fmt.Errorf("--run %q selects none of the %d scenarios", o.run, len(all))
	}
	out := cmd.OutOrStdout()
	if o.listImages {
		for _, im := range compare.CorpusImages(selected) {
			fmt.Fprintln(out, im)
		}
		return nil, nil
	}
	compare.RetargetImages(selected, o.imageRegistry)
	if o.check {
		fmt.Fprintf(out, "%d scenarios valid (%d selected)\n", len(all), len(selected))
		return nil, nil
	}
	var baseline *compare.Result
	switch {
	case o.recordRuns > 0:
		if o.nodeB == "" {
			return nil, errors.New("--node is required")
		}
	case o.baseline != "" && o.nodeB != "":
		return nil, errors.New("--baseline and --node-b exclude each other")
	case o.baseline != "":
		rs, err := compare.ReadResults([]string{o.baseline})
		if err != nil {
			return nil, fmt.Errorf("--baseline: %w", err)
		}
		baseline = rs[0]
	case o.nodeA == "" || o.nodeB == "":
		return nil, errors.New("--node-a and --node-b (or --baseline) are required")
	}
	if o.nodeA == "" && o.recordRuns == 0 {
		return nil, errors.New("--node-a is required")
	}
	if o.retries < 0 {
		return nil, errors.New("--retries must not be negative")
	}
	if o.parallel < 1 {
		return nil, errors.New("--parallel must be at least 1")
	}

	logger := logrus.New()
	logger.SetOutput(os.Stderr)
	lvl, err := logrus.ParseLevel(o.logLevel)
	if err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	logger.SetLevel(lvl)
	logger.SetFormatter(&logrus.TextFormatter{FullTimestamp: true})

	cfg, err := restConfig(o.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg.UserAgent = "vk-cri-compare/" + version
	cfg.QPS, cfg.Burst = 50, 100
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	r := &compare.Runner{
		Client:         client,
		Config:         cfg,
		NodeA:          o.nodeA,
		NodeB:          o.nodeB,
		Settle:         o.settle,
		KeepNamespaces: o.keepNamespaces,
		Log:            logger,
		RecordRuns:     o.recordRuns,
		ImageRegistry:  o.imageRegistry,
	}
	if baseline != nil {
		if r.Baseline, err = compare.BaselineOf(baseline); err != nil {
			return nil, fmt.Errorf("--baseline: %w", err)
		}
		r.NodeB = baseline.NodeB
	}
	ctx := cmd.Context()
	if err := r.CheckNodes(ctx); err != nil {
		return nil, err
	}
	res := r.RunAll(ctx, selected, compare.RunOptions{Run: re, OnlyMatching: o.onlyMatching, Parallel: o.parallel, Report: out, Retries: o.retries}, o.scenarios)
	compare.PrintSummary(out, res)
	return res, nil
}
