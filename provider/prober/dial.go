package prober

import (
	"net"
	"syscall"
)

// dialer opens the probes' connections. A linger of one second makes close send a reset after
// that time instead of leaving the socket in TIME_WAIT: a node probing hundreds of containers
// every second would otherwise run out of ephemeral ports, which is why the kubelet does it.
func dialer() *net.Dialer {
	return &net.Dialer{
		Control: func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) {
				serr = syscall.SetsockoptLinger(int(fd), syscall.SOL_SOCKET, syscall.SO_LINGER, &syscall.Linger{Onoff: 1, Linger: 1})
			})
			if err != nil {
				return err
			}
			return serr
		},
	}
}
