package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/vk-cri/vk-cri/compare"
)

func newCompareReportCommand() *cobra.Command {
	var html, junit string
	cmd := &cobra.Command{
		Use:   "report RESULT.json --html FILE [--junit FILE]",
		Short: "Make the HTML report and JUnit XML of a saved compare result",
		Long: `report reads the JSON result of a compare run (vk-cri compare --out) and writes what --html and
--junit would have written during the run: a self-contained HTML page (the two nodes' timelines
side by side on one time axis, events, deletion times, the differences highlighted; no scripts,
nothing fetched from the network) and JUnit XML. It prints the run's score line.`,
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if html == "" && junit == "" {
				return errors.New("give --html FILE, --junit FILE or both")
			}
			results, err := compare.ReadResults(args)
			if err != nil {
				return err
			}
			res := results[0]
			fmt.Fprintln(cmd.OutOrStdout(), res.ScoreLine())
			return writeReports(res, "", html, junit, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&html, "html", "", "write the HTML report to this file")
	cmd.Flags().StringVar(&junit, "junit", "", "write JUnit XML to this file")
	return cmd
}

// writeReports writes the result as JSON, HTML and JUnit XML to the files given (an empty name
// skips that form) and says on out where each went.
func writeReports(res *compare.Result, jsonPath, htmlPath, junitPath string, out io.Writer) error {
	if jsonPath != "" {
		if err := res.WriteJSON(jsonPath); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		fmt.Fprintf(out, "result written to %s\n", jsonPath)
	}
	for _, f := range []struct {
		flag, path string
		write      func(io.Writer, *compare.Result) error
	}{{"--html", htmlPath, compare.WriteHTML}, {"--junit", junitPath, compare.WriteJUnit}} {
		if f.path == "" {
			continue
		}
		if err := writeFile(f.path, func(w io.Writer) error { return f.write(w, res) }); err != nil {
			return fmt.Errorf("%s: %w", f.flag, err)
		}
		fmt.Fprintf(out, "%s report written to %s\n", f.flag[2:], f.path)
	}
	return nil
}

// writeFile writes a file through a buffer, reporting the first error of writing or closing.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := write(w); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
