//! A run's trace as OpenTelemetry: [`export_request`] maps a
//! [`promptforge_engine::trace::Trace`] to one OTLP `ExportTraceServiceRequest`
//! whose spans follow the OpenTelemetry GenAI semantic conventions (v1.37 and
//! later: `gen_ai.provider.name`, `gen_ai.input.messages`, ...); [`to_json`]
//! writes it as OTLP/JSON for a file and [`send`] posts it to a collector over
//! OTLP/HTTP (protobuf). Front ends decide where a trace goes; this crate only
//! knows how it looks.

mod export;
mod genai;
mod ids;
mod spans;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::InstrumentationScope;
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans};
use promptforge_engine::trace::Trace;

pub use export::{send, traces_endpoint, ExportError, EXPORT_TIMEOUT};
pub use ids::{span_id, trace_id};
pub use opentelemetry_proto::tonic as proto;

/// The instrumentation scope's and the service's name.
pub const SERVICE_NAME: &str = "promptforge";

/// The trace of one run of the prompt at `prompt` (its path as the user gave
/// it) as one OTLP request: one resource (`service.name` = `promptforge`,
/// `promptforge.prompt`), one scope, one span per span of the trace.
pub fn export_request(trace: &Trace, prompt: &str) -> ExportTraceServiceRequest {
    let resource = Resource {
        attributes: vec![
            spans::string("service.name", SERVICE_NAME),
            spans::string("promptforge.prompt", prompt),
        ],
        dropped_attributes_count: 0,
        entity_refs: Vec::new(),
    };
    let scope = InstrumentationScope {
        name: SERVICE_NAME.to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        attributes: Vec::new(),
        dropped_attributes_count: 0,
    };
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(resource),
            scope_spans: vec![ScopeSpans {
                scope: Some(scope),
                spans: spans::spans(trace, prompt),
                schema_url: String::new(),
            }],
            schema_url: String::new(),
        }],
    }
}

/// The request as OTLP/JSON (the encoding OTLP/HTTP uses for
/// `application/json`: lower-case hex ids, camelCase fields, enums as
/// integers, 64-bit integers as decimal strings), one JSON document.
pub fn to_json(request: &ExportTraceServiceRequest) -> String {
    // The generated types serialise to the OTLP/JSON shape; they hold no map
    // with non-string keys, so this cannot fail.
    serde_json::to_string_pretty(request).unwrap_or_default()
}
