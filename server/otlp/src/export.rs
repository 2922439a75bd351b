//! Sending a trace to an OpenTelemetry collector over OTLP/HTTP: the request as
//! protobuf (`application/x-protobuf`, the encoding every OTLP receiver
//! accepts) in one POST.

use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use promptforge_engine::trace::address_without_credentials;
use prost::Message;

/// How long one export may take, connecting included.
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// The traces address of an OTLP/HTTP endpoint: `url` as given when its path
/// ends in `/v1/traces`, else `url` with `/v1/traces` appended to its path (as
/// `OTEL_EXPORTER_OTLP_ENDPOINT` does); a query stays where it was.
pub fn traces_endpoint(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else {
        return url.to_owned();
    };
    let path = parsed.path().trim_end_matches('/').to_owned();
    if !path.ends_with("/v1/traces") {
        parsed.set_path(&format!("{path}/v1/traces"));
    }
    parsed.to_string()
}

/// Why an export failed; its text is one line naming the address without
/// credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportError {
    /// The traces address, without user, password or query.
    pub address: String,
    /// What went wrong.
    pub reason: String,
}

impl std::fmt::Display for ExportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot export the trace to {}: {}",
            self.address, self.reason
        )
    }
}

impl std::error::Error for ExportError {}

/// Posts `request` to the OTLP/HTTP endpoint `url` (see [`traces_endpoint`]),
/// within [`EXPORT_TIMEOUT`]; a status other than 2xx is an error.
pub async fn send(url: &str, request: &ExportTraceServiceRequest) -> Result<(), ExportError> {
    let endpoint = traces_endpoint(url);
    let fail = |reason: String| ExportError {
        address: match address_without_credentials(&endpoint) {
            address if address.is_empty() => "an address that is not a URL".to_owned(),
            address => address,
        },
        reason,
    };
    let client = reqwest::Client::builder()
        .timeout(EXPORT_TIMEOUT)
        .build()
        .map_err(|e| fail(one_line(e)))?;
    let response = client
        .post(&endpoint)
        .header("content-type", "application/x-protobuf")
        .body(request.encode_to_vec())
        .send()
        .await
        .map_err(|e| fail(one_line(e)))?;
    let status = response.status();
    if status.is_success() {
        Ok(())
    } else {
        Err(fail(format!("the collector answered {status}")))
    }
}

/// An HTTP error as one line, without the address (reqwest's text names the
/// URL, which may carry a key).
fn one_line(error: reqwest::Error) -> String {
    let error = error.without_url();
    let reason = if error.is_timeout() {
        format!("no answer within {} s", EXPORT_TIMEOUT.as_secs())
    } else if error.is_connect() {
        "cannot connect".to_owned()
    } else if error.is_builder() {
        "not a valid URL".to_owned()
    } else {
        error.to_string()
    };
    reason.lines().next().unwrap_or_default().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_get_the_traces_path_once() {
        assert_eq!(
            traces_endpoint("http://127.0.0.1:4318"),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert_eq!(traces_endpoint("http://h:6006/"), "http://h:6006/v1/traces");
        assert_eq!(
            traces_endpoint("https://h/otel/v1/traces"),
            "https://h/otel/v1/traces"
        );
        assert_eq!(
            traces_endpoint("https://u:p@h/otel?k=1"),
            "https://u:p@h/otel/v1/traces?k=1"
        );
    }
}
