package prober

import (
	"net"
	"strconv"
	"time"
)

// TCPSocket succeeds when a TCP connection to host:port opens within the timeout; the
// connection is closed at once. A failure's string is the dial error.
func TCPSocket(host string, port int, timeout time.Duration) (Outcome, string) {
	d := dialer()
	d.Timeout = timeout
	conn, err := d.Dial("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return OutcomeFailure, err.Error()
	}
	_ = conn.Close()
	return OutcomeSuccess, ""
}
