package prober

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// GRPC asks host:port's grpc.health.v1.Health service about service ("" is the server as a
// whole), in plain text, within the timeout. SERVING succeeds. The string is the text the
// kubelet puts in its events.
func GRPC(host, service string, port int, timeout time.Duration) (Outcome, string) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	//nolint:staticcheck // a blocking dial tells "cannot connect" apart from "unhealthy", as the kubelet's messages do
	conn, err := grpc.DialContext(ctx, addr,
		grpc.WithUserAgent(UserAgent("probe")),
		grpc.WithBlock(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) {
			return dialer().DialContext(ctx, "tcp", a)
		}),
	)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return OutcomeFailure, fmt.Sprintf("timeout: failed to connect service %q within %v: %+v", addr, timeout, err)
		}
		return OutcomeFailure, fmt.Sprintf("error: failed to connect service at %q: %+v", addr, err)
	}
	defer conn.Close()

	resp, err := healthpb.NewHealthClient(conn).Check(metadata.NewOutgoingContext(ctx, metadata.MD{}), &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		if st, ok := status.FromError(err); ok {
			switch st.Code() {
			case codes.Unimplemented:
				return OutcomeFailure, fmt.Sprintf("error: this server does not implement the grpc health protocol (grpc.health.v1.Health): %s", st.Message())
			case codes.DeadlineExceeded:
				return OutcomeFailure, fmt.Sprintf("timeout: health rpc did not complete within %v", timeout)
			}
		}
		return OutcomeFailure, fmt.Sprintf("error: health rpc probe failed: %+v", err)
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return OutcomeFailure, fmt.Sprintf("service unhealthy (responded with %q)", resp.GetStatus().String())
	}
	return OutcomeSuccess, "service healthy"
}
