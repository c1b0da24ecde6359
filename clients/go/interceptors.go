// The interceptors every call goes through: the credential and tenant headers (unless the
// call's context sets them), the default deadline of unary calls, the wait for a server that
// is not reachable yet (readiness.go), and every error turned into an *Error.

package checkpointd

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// callHeaders are the outgoing metadata pairs a call carries unless its context sets them.
type callHeaders map[string]string

func newCallHeaders(token, tenant string) callHeaders {
	headers := callHeaders{}
	if token != "" {
		headers["authorization"] = "Bearer " + token
	}
	if tenant != "" {
		headers["x-tenant-id"] = tenant
	}
	return headers
}

// apply adds the headers the context's outgoing metadata does not already hold.
func (h callHeaders) apply(ctx context.Context) context.Context {
	if len(h) == 0 {
		return ctx
	}
	existing, _ := metadata.FromOutgoingContext(ctx)
	var pairs []string
	for key, value := range h {
		if len(existing.Get(key)) == 0 {
			pairs = append(pairs, key, value)
		}
	}
	if len(pairs) == 0 {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, pairs...)
}

func unaryInterceptor(headers callHeaders, defaultTimeout time.Duration, ready readiness) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
		invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		ctx = headers.apply(ctx)
		if _, has := ctx.Deadline(); !has && defaultTimeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, defaultTimeout)
			defer cancel()
		}
		timedOut, err := ready.wait(ctx, cc)
		if err != nil {
			return err
		}
		err = FromError(invoker(ctx, method, req, reply, cc, opts...))
		if timedOut {
			return ready.unreachable(err)
		}
		return err
	}
}

func streamInterceptor(headers callHeaders, ready readiness) grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
		streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		timedOut, err := ready.wait(ctx, cc)
		if err != nil {
			return nil, err
		}
		stream, err := streamer(headers.apply(ctx), desc, cc, method, opts...)
		if err != nil && timedOut {
			return nil, ready.unreachable(FromError(err))
		}
		if err != nil {
			return nil, FromError(err)
		}
		return typedErrorStream{stream}, nil
	}
}

// typedErrorStream turns a stream's errors into *Error; io.EOF (the end) passes unchanged.
type typedErrorStream struct{ grpc.ClientStream }

func (s typedErrorStream) RecvMsg(m any) error { return streamError(s.ClientStream.RecvMsg(m)) }
func (s typedErrorStream) SendMsg(m any) error { return streamError(s.ClientStream.SendMsg(m)) }
func (s typedErrorStream) CloseSend() error    { return streamError(s.ClientStream.CloseSend()) }

func (s typedErrorStream) Header() (metadata.MD, error) {
	md, err := s.ClientStream.Header()
	return md, streamError(err)
}
