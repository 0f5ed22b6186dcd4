"""An OTLP/gRPC receiver for codectx's telemetry test.

Serves the OpenTelemetry TraceService and MetricsService (the official
opentelemetry-proto messages over grpcio, both from PyPI) and appends every exported
span and metric data point to a JSON-lines file, one object per line:

  {"signal": "span", "service": ..., "trace_id": ..., "span_id": ...,
   "parent_span_id": ..., "name": ..., "kind": ..., "attributes": {...}}
  {"signal": "metric", "service": ..., "name": ..., "attributes": {...}}

Usage: receiver.py OUT.jsonl   (prints "LISTENING <port>" once ready, on a free port)
"""

import json
import sys
import threading
from concurrent import futures

import grpc
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2, metrics_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

lock = threading.Lock()
out = open(sys.argv[1], "a", buffering=1)


def value(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def attributes(pairs):
    return {kv.key: value(kv.value) for kv in pairs}


def write(record):
    with lock:
        out.write(json.dumps(record, default=str) + "\n")


class Traces(trace_service_pb2_grpc.TraceServiceServicer):
    def Export(self, request, context):
        for resource_spans in request.resource_spans:
            service = attributes(resource_spans.resource.attributes).get("service.name")
            for scope in resource_spans.scope_spans:
                for span in scope.spans:
                    write({
                        "signal": "span",
                        "service": service,
                        "trace_id": span.trace_id.hex(),
                        "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex(),
                        "name": span.name,
                        "kind": span.kind,
                        "attributes": attributes(span.attributes),
                    })
        return trace_service_pb2.ExportTraceServiceResponse()


class Metrics(metrics_service_pb2_grpc.MetricsServiceServicer):
    def Export(self, request, context):
        for resource_metrics in request.resource_metrics:
            service = attributes(resource_metrics.resource.attributes).get("service.name")
            for scope in resource_metrics.scope_metrics:
                for metric in scope.metrics:
                    kind = metric.WhichOneof("data")
                    for point in getattr(metric, kind).data_points:
                        write({
                            "signal": "metric",
                            "service": service,
                            "name": metric.name,
                            "attributes": attributes(point.attributes),
                        })
        return metrics_service_pb2.ExportMetricsServiceResponse()


server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Traces(), server)
metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(Metrics(), server)
port = server.add_insecure_port("127.0.0.1:0")
server.start()
print(f"LISTENING {port}", flush=True)
server.wait_for_termination()
