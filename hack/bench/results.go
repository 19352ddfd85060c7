// The results: what one run measured, as printed and as written to --out (JSON).

package main

import (
	"fmt"
	"time"
)

// Window is the agent's resource use over one measurement window.
type Window struct {
	Pods        int     `json:"pods"`
	Seconds     float64 `json:"seconds"`
	RSSMeanMiB  float64 `json:"rss_mean_mib"`
	RSSMaxMiB   float64 `json:"rss_max_mib"`
	CPUSeconds  float64 `json:"cpu_seconds"`
	CPUPercent  float64 `json:"cpu_percent_of_one_core"`
	RSSSamples  int     `json:"rss_samples"`
	Unavailable string  `json:"unavailable,omitempty"`
}

// NodeResult holds one node's raw samples (milliseconds) and windows.
type NodeResult struct {
	Role      string `json:"role"`
	Node      string `json:"node"`
	Skipped   string `json:"skipped,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	AgentPID  int    `json:"agent_pid,omitempty"`
	AgentComm string `json:"agent_comm,omitempty"`

	StartupRunningMs  []float64          `json:"startup_running_ms"`
	StartupReadyMs    []float64          `json:"startup_ready_ms"`
	BurstAllRunningMs *float64           `json:"burst_first_create_to_last_running_ms,omitempty"`
	BurstAgentCPUSec  *float64           `json:"burst_agent_cpu_seconds,omitempty"`
	StatusMs          []float64          `json:"status_exit_to_failed_ms"`
	DeleteMs          []float64          `json:"delete_ms"`
	LoadAllRunningMs  *float64           `json:"load_first_create_to_last_running_ms,omitempty"`
	LoadDeleteMs      []float64          `json:"load_delete_ms"`
	Windows           map[string]*Window `json:"windows"`
	// Context of the measurement on a shared machine: pods of other users bound to the same node,
	// and the host's load average, at the start and at the end.
	OtherPods       [2]int    `json:"other_pods_on_node_start_end"`
	LoadAvg         [2]string `json:"loadavg_start_end"`
	Notes           []string  `json:"notes,omitempty"`
	DurationSeconds float64   `json:"duration_seconds"`
}

func (r *NodeResult) note(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	logf("%s: %s", r.Node, msg)
	r.Notes = append(r.Notes, msg)
}

// FloorResult is the runtime floor: CRI calls made directly, no agent.
type FloorResult struct {
	Endpoint string `json:"endpoint"`
	Image    string `json:"image"`
	// Sequential: one sandbox after the other; per step and total, per sandbox.
	SeqRunPodSandboxMs []float64 `json:"seq_run_pod_sandbox_ms"`
	SeqCreateMs        []float64 `json:"seq_create_container_ms"`
	SeqStartMs         []float64 `json:"seq_start_container_ms"`
	SeqTotalMs         []float64 `json:"seq_total_ms"`
	// Concurrent: N goroutines released at once; per sandbox from the common start to its
	// StartContainer returning, and the time until the last one returned.
	ConcN          int       `json:"concurrent_n"`
	ConcPerPodMs   []float64 `json:"concurrent_per_pod_ms"`
	ConcAllMs      float64   `json:"concurrent_all_started_ms"`
	ConcTeardownMs float64   `json:"concurrent_stop_remove_all_ms"`
	Errors         []string  `json:"errors,omitempty"`
}

// Row is one line of the table.
type Row struct {
	Metric  string   `json:"metric"`
	Unit    string   `json:"unit"`
	VKCRI   *float64 `json:"vk_cri"`
	Kubelet *float64 `json:"kubelet"`
	Ratio   *float64 `json:"ratio_vk_cri_over_kubelet"`
}

// Result is the whole run, written by --out.
type Result struct {
	RunID           string        `json:"run_id"`
	Started         time.Time     `json:"started"`
	DurationSeconds float64       `json:"duration_seconds"`
	Host            string        `json:"host"`
	CPUs            int           `json:"cpus"`
	Image           string        `json:"image"`
	Nodes           []*NodeResult `json:"nodes"`
	Table           []Row         `json:"table"`
	Floor           *FloorResult  `json:"runtime_floor,omitempty"`
	Notes           []string      `json:"notes"`
}
