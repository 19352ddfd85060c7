package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

func newCompareRecordCommand() *cobra.Command {
	o := &compareOptions{}
	cmd := &cobra.Command{
		Use:   "record --node NODE --out FILE [--runs N] [--scenarios DIR] [--run REGEX]",
		Short: "Record a baseline: the scenarios run on one node, for later comparisons without it",
		Long: `record runs the scenarios on one node only (the upstream kubelet, usually) and writes its
normalised records as a baseline. "vk-cri compare --node-a NODE --baseline FILE" then compares
another node with the baseline without running the recorded node. With --runs N each scenario is
run N times: the earlier runs' deletion times are kept, so that the comparison allows for the
recorded node's own spread as a live comparison does when it runs a scenario again.

Exit status 0 when every scenario was recorded, 2 when one could not be run.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.out == "" {
				return exitWith(exitCouldNotCompare, errors.New("--out is required"))
			}
			if o.recordRuns < 1 {
				return exitWith(exitCouldNotCompare, errors.New("--runs must be at least 1"))
			}
			res, err := compareScenarios(cmd, o)
			if err != nil {
				return exitWith(exitCouldNotCompare, err)
			}
			if res == nil { // --check, --list-images
				return nil
			}
			if err := writeReports(res, o.out, "", "", cmd.OutOrStdout()); err != nil {
				return exitWith(exitCouldNotCompare, err)
			}
			if cmd.Context().Err() != nil {
				return exitWith(exitCouldNotCompare, fmt.Errorf("interrupted: %w", cmd.Context().Err()))
			}
			if n := len(res.Summary.Errors); n > 0 {
				return exitWith(exitCouldNotCompare, fmt.Errorf("%d of %d scenarios could not be recorded", n, res.Summary.Ran))
			}
			return nil
		},
	}
	f := cmd.Flags()
	addScenarioRunFlags(f, o)
	f.StringVar(&o.nodeB, "node", "", "the node to record (it is node B of later comparisons)")
	f.StringVar(&o.out, "out", "", "the baseline file to write (JSON)")
	f.IntVar(&o.recordRuns, "runs", 1, "runs of each scenario")
	return cmd
}
