// Package streaming serves the data paths of the kubelet API as the kubelet does:
// /containerLogs (read from the CRI log files), and /exec, /attach and /portForward, for which
// it asks the runtime for its streaming URL and proxies the client's upgraded connection there
// (SPDY as it is, WebSocket translated to SPDY), so that exit codes and terminal resizes travel
// the runtime's own protocol.
package streaming
