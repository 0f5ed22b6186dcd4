"""Waits until a gRPC server reports SERVING on the standard health service.

Usage: health.py HOST:PORT TIMEOUT_SECONDS. Calls grpc.health.v1.Health/Check with
service "" through grpcio; the messages are encoded by hand (an empty request; the
response's field 1 is the status, SERVING = 1). Exits 0 once SERVING, 1 on timeout.
"""

import sys
import time

import grpc

address, timeout = sys.argv[1], float(sys.argv[2])
channel = grpc.insecure_channel(address)
check = channel.unary_unary(
    "/grpc.health.v1.Health/Check",
    request_serializer=lambda message: message,
    response_deserializer=lambda message: message,
)
deadline = time.time() + timeout
last = "no answer"
while time.time() < deadline:
    try:
        response = check(b"", timeout=2)
        if response == b"\x08\x01":
            print(f"{address}: SERVING")
            sys.exit(0)
        last = f"status bytes {response!r}"
    except grpc.RpcError as error:
        last = f"{error.code()}: {error.details()}"
    time.sleep(0.3)
print(f"{address}: not SERVING after {timeout:.0f} s ({last})", file=sys.stderr)
sys.exit(1)
