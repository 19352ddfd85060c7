// Package stats measures the node and its pods the way the kubelet does: the node from cAdvisor
// (machine info and the root cgroup), pods and containers from the CRI runtime completed by
// cAdvisor's reading of their cgroups, plus volume and log usage. It serves the kubelet's
// /stats/summary, /metrics/resource and /metrics/cadvisor and feeds the eviction manager.
//
// cAdvisor's manager tracks only the root cgroup: its container discovery would put an inotify
// watch on every cgroup of the machine and rescan all of them every minute, a cost each vk-cri
// node on a shared machine would pay for cgroups it does not own. Pod and container cgroups are
// read on demand, at scrape time, with cAdvisor's own cgroup handler.
package stats
