package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/vk-cri/vk-cri/compare"
)

// newCompareFlakesCommand is `vk-cri compare flakes`: the flake table of several compare runs.
func newCompareFlakesCommand() *cobra.Command {
	var scenarios string
	cmd := &cobra.Command{
		Use:   "flakes RESULT.json...",
		Short: "Tabulate which scenarios differed across several compare runs, and which node raced",
		Long: `flakes reads the JSON results of several runs of the same corpus (vk-cri compare --out, best
with --retries 0; hack/compare-flakes.sh makes them) and prints, as Markdown for
test/compare/README.md, each scenario that differed in at least one run: in how many runs, the
diff paths (indexes as *) with the number of runs that differed at each, and the node whose own
value moved between runs ("the node that raced"; "neither (steady)" when both nodes did the same
in every run, a real difference). --scenarios gives the scenarios' compare options (ignore
patterns), used when comparing a node's runs with each other.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			results, err := compare.ReadResults(args)
			if err != nil {
				return err
			}
			opts := map[string]compare.CompareOptions{}
			if scenarios != "" {
				if _, err := os.Stat(scenarios); err == nil {
					all, err := compare.LoadDir(scenarios)
					if err != nil {
						return fmt.Errorf("--scenarios: %w", err)
					}
					for _, sc := range all {
						opts[sc.ID()] = sc.Compare
					}
				}
			}
			tab := compare.BuildFlakeTable(results, func(id string) compare.CompareOptions { return opts[id] })
			tab.WriteMarkdown(cmd.OutOrStdout())
			return nil
		},
	}
	cmd.Flags().StringVar(&scenarios, "scenarios", "test/compare", "directory of the scenario files (for their compare options; skipped when absent)")
	return cmd
}
