// Statistics and output: percentiles, the vk-cri/kubelet table and the printed report.

package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"text/tabwriter"
)

// pct is the nearest-rank percentile (p in (0,100]) of the samples; NaN when there are none.
func pct(samples []float64, p float64) float64 {
	if len(samples) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), samples...)
	sort.Float64s(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = max(1, min(rank, len(s)))
	return s[rank-1]
}

func fmtMs(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.0f ms", v)
}

func ptr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func buildTable(vk, ref *NodeResult) []Row {
	type metric struct {
		name, unit string
		f          func(r *NodeResult) float64
	}
	samples := func(get func(r *NodeResult) []float64, p float64) func(r *NodeResult) float64 {
		return func(r *NodeResult) float64 { return pct(get(r), p) }
	}
	num := func(get func(r *NodeResult) []float64) func(r *NodeResult) float64 {
		return func(r *NodeResult) float64 { return float64(len(get(r))) }
	}
	opt := func(get func(r *NodeResult) *float64) func(r *NodeResult) float64 {
		return func(r *NodeResult) float64 {
			if v := get(r); v != nil {
				return *v
			}
			return math.NaN()
		}
	}
	win := func(key string, get func(w *Window) float64) func(r *NodeResult) float64 {
		return func(r *NodeResult) float64 {
			w := r.Windows[key]
			if w == nil || w.Unavailable != "" {
				return math.NaN()
			}
			return get(w)
		}
	}
	running := func(r *NodeResult) []float64 { return r.StartupRunningMs }
	ready := func(r *NodeResult) []float64 { return r.StartupReadyMs }
	status := func(r *NodeResult) []float64 { return r.StatusMs }
	del := func(r *NodeResult) []float64 { return r.DeleteMs }
	loadDel := func(r *NodeResult) []float64 { return r.LoadDeleteMs }
	rssMean := func(w *Window) float64 { return w.RSSMeanMiB }
	rssMax := func(w *Window) float64 { return w.RSSMaxMiB }
	cpuSec := func(w *Window) float64 { return w.CPUSeconds }
	cpuPct := func(w *Window) float64 { return w.CPUPercent }

	metrics := []metric{
		{"startup: create → Running, pods", "n", num(running)},
		{"startup: create → Running p50", "ms", samples(running, 50)},
		{"startup: create → Running p90", "ms", samples(running, 90)},
		{"startup: create → Running p99", "ms", samples(running, 99)},
		{"startup: create → Running max", "ms", samples(running, 100)},
		{"startup: create → Ready p50", "ms", samples(ready, 50)},
		{"startup: create → Ready p90", "ms", samples(ready, 90)},
		{"startup: create → Ready p99", "ms", samples(ready, 99)},
		{"startup: create → Ready max", "ms", samples(ready, 100)},
		{"burst: first create → last Running", "ms", opt(func(r *NodeResult) *float64 { return r.BurstAllRunningMs })},
		{"burst: agent CPU, create → all Ready", "s", opt(func(r *NodeResult) *float64 { return r.BurstAgentCPUSec })},
		{"status: exit → Failed, trials", "n", num(status)},
		{"status: exit → Failed p50", "ms", samples(status, 50)},
		{"status: exit → Failed p99", "ms", samples(status, 99)},
		{"delete (burst pods): call → gone p50", "ms", samples(del, 50)},
		{"delete (burst pods): call → gone p99", "ms", samples(del, 99)},
		{"idle: agent RSS mean", "MiB", win("idle", rssMean)},
		{"idle: agent RSS max", "MiB", win("idle", rssMax)},
		{"idle: agent CPU in window", "s", win("idle", cpuSec)},
		{"idle: agent CPU", "% core", win("idle", cpuPct)},
		{"burst pods running: agent RSS mean", "MiB", win("pods_burst", rssMean)},
		{"burst pods running: agent RSS max", "MiB", win("pods_burst", rssMax)},
		{"burst pods running: agent CPU in window", "s", win("pods_burst", cpuSec)},
		{"burst pods running: agent CPU", "% core", win("pods_burst", cpuPct)},
		{"load: first create → last Running", "ms", opt(func(r *NodeResult) *float64 { return r.LoadAllRunningMs })},
		{"load pods running: agent RSS mean", "MiB", win("pods_load", rssMean)},
		{"load pods running: agent RSS max", "MiB", win("pods_load", rssMax)},
		{"load pods running: agent CPU in window", "s", win("pods_load", cpuSec)},
		{"load pods running: agent CPU", "% core", win("pods_load", cpuPct)},
		{"delete (load pods): call → gone p50", "ms", samples(loadDel, 50)},
		{"delete (load pods): call → gone p99", "ms", samples(loadDel, 99)},
	}
	value := func(r *NodeResult, f func(*NodeResult) float64) *float64 {
		if r == nil || r.Skipped != "" {
			return nil
		}
		return ptr(f(r))
	}
	var rows []Row
	for _, m := range metrics {
		row := Row{Metric: m.name, Unit: m.unit, VKCRI: value(vk, m.f), Kubelet: value(ref, m.f)}
		if row.VKCRI != nil && row.Kubelet != nil && *row.Kubelet != 0 && m.unit != "n" {
			row.Ratio = ptr(*row.VKCRI / *row.Kubelet)
		}
		rows = append(rows, row)
	}
	return rows
}

func fmtVal(v *float64, unit string) string {
	if v == nil {
		return "n/a"
	}
	switch unit {
	case "ms", "n":
		return fmt.Sprintf("%.0f", *v)
	case "s":
		return fmt.Sprintf("%.2f", *v)
	default:
		return fmt.Sprintf("%.1f", *v)
	}
}

func printReport(w io.Writer, res *Result, o options) {
	vkName, refName := "vk-cri", "kubelet"
	for _, n := range res.Nodes {
		label := n.Node
		if n.Skipped != "" {
			label += ", skipped"
		}
		if n.Role == "vk-cri" {
			vkName = "vk-cri (" + label + ")"
		} else {
			refName = "kubelet (" + label + ")"
		}
	}
	fmt.Fprintf(w, "\n== vk-cri bench %s: %d-pod burst, %d status trials, %d-pod load, %v resource windows ==\n",
		res.RunID, o.burst, o.statusTrials, o.load, o.window)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "metric\tunit\t%s\t%s\tratio vk-cri/kubelet\t\n", vkName, refName)
	for _, r := range res.Table {
		ratio := "-"
		if r.Ratio != nil {
			ratio = fmt.Sprintf("%.2f", *r.Ratio)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", r.Metric, r.Unit, fmtVal(r.VKCRI, r.Unit), fmtVal(r.Kubelet, r.Unit), ratio)
	}
	tw.Flush()
	if f := res.Floor; f != nil {
		fmt.Fprintf(w, "\n== runtime floor: CRI RunPodSandbox + CreateContainer + StartContainer directly on %s ==\n", f.Endpoint)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "metric\tunit\tvalue\t\n")
		line := func(name, unit string, v float64) {
			fmt.Fprintf(tw, "%s\t%s\t%s\t\n", name, unit, fmtVal(ptr(v), unit))
		}
		line(fmt.Sprintf("sequential (%d): RunPodSandbox p50", len(f.SeqTotalMs)), "ms", pct(f.SeqRunPodSandboxMs, 50))
		line(fmt.Sprintf("sequential (%d): CreateContainer p50", len(f.SeqTotalMs)), "ms", pct(f.SeqCreateMs, 50))
		line(fmt.Sprintf("sequential (%d): StartContainer p50", len(f.SeqTotalMs)), "ms", pct(f.SeqStartMs, 50))
		line(fmt.Sprintf("sequential (%d): total per pod p50", len(f.SeqTotalMs)), "ms", pct(f.SeqTotalMs, 50))
		line(fmt.Sprintf("concurrent (%d at once): per pod p50", f.ConcN), "ms", pct(f.ConcPerPodMs, 50))
		line(fmt.Sprintf("concurrent (%d at once): per pod p90", f.ConcN), "ms", pct(f.ConcPerPodMs, 90))
		line(fmt.Sprintf("concurrent (%d at once): all started", f.ConcN), "ms", f.ConcAllMs)
		line(fmt.Sprintf("concurrent (%d at once): stop + remove all", f.ConcN), "ms", f.ConcTeardownMs)
		tw.Flush()
		for _, e := range f.Errors {
			fmt.Fprintf(w, "  floor error: %s\n", e)
		}
	}
	fmt.Fprintln(w, "\nnotes:")
	for _, n := range res.Notes {
		fmt.Fprintf(w, "  - %s\n", n)
	}
	for _, n := range res.Nodes {
		if n.Skipped != "" {
			fmt.Fprintf(w, "  - %s node %s SKIPPED: %s\n", n.Role, n.Node, n.Skipped)
		}
		for _, msg := range n.Notes {
			fmt.Fprintf(w, "  - %s: %s\n", n.Node, msg)
		}
	}
	fmt.Fprintf(w, "total %.0f s\n", res.DurationSeconds)
}
