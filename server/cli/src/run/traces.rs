//! Where a run's trace goes (`run --trace FILE`, `run --otlp URL`, `[trace]
//! otlp_endpoint`): the trace is recorded only when it goes somewhere; it is
//! written as OTLP/JSON and exported over OTLP/HTTP by `promptforge-otlp`.

use std::path::PathBuf;

use promptforge_engine::atomic_file;
use promptforge_engine::host::Config;
use promptforge_engine::trace::Trace;

use crate::cli::RunArgs;

/// The places a run's trace goes.
#[derive(Debug, Clone, Default)]
pub struct TraceTargets {
    /// `--trace FILE`: the OTLP/JSON file.
    file: Option<PathBuf>,
    /// `--otlp URL`, else `[trace] otlp_endpoint`.
    endpoint: Option<String>,
}

/// A trace that could not go where it was sent: the line to print, and whether
/// it fails the command (a file that cannot be written does; an export that
/// fails does not: the run happened, the collector may be away).
pub struct Undelivered {
    /// One line, without the file's content or a URL's credentials.
    pub line: String,
    /// True when the command exits 2 for it.
    pub fails: bool,
}

impl TraceTargets {
    /// The targets of `args` over `config` (`--otlp` wins over the file's key).
    pub fn new(args: &RunArgs, config: &Config) -> TraceTargets {
        TraceTargets {
            file: args.trace.clone(),
            endpoint: args
                .otlp
                .clone()
                .or_else(|| config.trace.otlp_endpoint.clone()),
        }
    }

    /// True when the run must record its trace.
    pub fn wanted(&self) -> bool {
        self.file.is_some() || self.endpoint.is_some()
    }

    /// Sends `trace` of the prompt `prompt` everywhere it goes; what failed.
    pub async fn deliver(&self, trace: &Trace, prompt: &str) -> Vec<Undelivered> {
        let request = promptforge_otlp::export_request(trace, prompt);
        let mut failed = Vec::new();
        if let Some(file) = &self.file {
            let text = promptforge_otlp::to_json(&request) + "\n";
            if let Err(error) = atomic_file::replace_at(file, text.as_bytes()) {
                failed.push(Undelivered {
                    line: format!(
                        "promptforge: {}: cannot write the trace: {}",
                        file.display(),
                        crate::files::describe_io_error(&error)
                    ),
                    fails: true,
                });
            }
        }
        if let Some(endpoint) = &self.endpoint {
            if let Err(error) = promptforge_otlp::send(endpoint, &request).await {
                failed.push(Undelivered {
                    line: format!("promptforge: {error}"),
                    fails: false,
                });
            }
        }
        failed
    }
}
