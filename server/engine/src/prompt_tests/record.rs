//! A live run recorded as a test case (`promptforge run --record`): the Host's
//! real models, tools and operator, each wrapped so that what they answered is
//! kept in order: the model's rounds (text replies and tool calls with their
//! arguments), each Harness tool's outputs or failures under its path, and the
//! `input` answers. With the seed and the outcome, that is a case that replays the
//! run offline.

use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use promptforge_syntax::test_file::{
    Answer, Case, Expect, ExpectError, Round, ScriptedCall, ScriptedTool, Spanned,
};
use tokio_util::sync::CancellationToken;

use crate::harness::{Tool, ToolError, ToolOutput};
use crate::host::Host;
use crate::input::{InputBroker, InputError};
use crate::models::{ModelError, ModelProvider, ModelReply, ModelRequest};
use crate::prompt_tests::hooked::{CallHook, HookedPlugin};
use crate::run::Outcome;

/// What a recorded run's models, tools and operator answered.
#[derive(Default)]
pub struct Recorder {
    rounds: Mutex<Vec<Round>>,
    tools: Mutex<Vec<ScriptedTool>>,
    input: Mutex<Vec<String>>,
    store: Mutex<Vec<(String, String)>>,
}

/// The most files a recorded case keeps as the run's starting store.
pub const MAX_STARTING_FILES: usize = 1000;
/// The most bytes of text a recorded case keeps as the run's starting store.
pub const MAX_STARTING_BYTES: usize = 1024 * 1024;

/// The files of `store` as a recorded case's `store:` (what the run starts with),
/// or why they cannot be: more than [`MAX_STARTING_FILES`] or
/// [`MAX_STARTING_BYTES`], or a file that is not text.
pub fn starting_store(store: &crate::store::Store) -> Result<Vec<(String, String)>, String> {
    let paths = store.list(None).map_err(|e| e.message)?;
    let too_large = |what: String| {
        format!(
            "the store holds {what}, more than a recorded case keeps as its starting store ({MAX_STARTING_FILES} files, {MAX_STARTING_BYTES} bytes)"
        )
    };
    if paths.len() > MAX_STARTING_FILES {
        return Err(too_large(format!("{} files", paths.len())));
    }
    let mut files = Vec::with_capacity(paths.len());
    let mut bytes = 0usize;
    for path in paths {
        let text = store.read(&path, None, None).map_err(|e| e.message)?;
        bytes = bytes.saturating_add(text.len());
        if bytes > MAX_STARTING_BYTES {
            return Err(too_large(format!("more than {MAX_STARTING_BYTES} bytes")));
        }
        files.push((path, text));
    }
    Ok(files)
}

/// A value with no place in a file yet.
fn unplaced<T>(value: T) -> Spanned<T> {
    Spanned::new(value, 0..0)
}

impl Recorder {
    /// An empty recording.
    pub fn new() -> Arc<Recorder> {
        Arc::new(Recorder::default())
    }

    /// Records the files the run's store starts with (see [`starting_store`]): the
    /// case replays against them.
    pub fn starting_files(&self, files: Vec<(String, String)>) {
        *self.store.lock().unwrap_or_else(PoisonError::into_inner) = files;
    }

    /// A Host like `base` whose models, Plugins' tools and operator report to this
    /// recording.
    pub fn host(self: &Arc<Self>, base: &Host) -> Host {
        let calls: Arc<dyn CallHook> = Arc::new(RecordingCalls(self.clone()));
        let harness = base
            .harness()
            .wrapped(&move |inner| HookedPlugin::wrap(inner, calls.clone()));
        let input = base.input().map(|inner| {
            Arc::new(RecordingInput {
                inner,
                recorder: self.clone(),
            }) as Arc<dyn InputBroker>
        });
        let mut host = base.derive(harness, input);
        let models_to = self.clone();
        host.wrap_models(&move |inner| {
            Arc::new(RecordingModel {
                inner,
                recorder: models_to.clone(),
            }) as Arc<dyn ModelProvider>
        });
        host
    }

    /// The case that replays the run: `name`, `args` and `seed` as run, the recorded
    /// rounds, tools and answers, and `expect:` the result (or the error, or
    /// `no_result`) as observed.
    pub fn case(&self, name: &str, args: &str, seed: u64, outcome: &Outcome) -> Case {
        let rounds = self
            .rounds
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let mut expect = Expect::default();
        match (&outcome.result, &outcome.error) {
            (_, Some(error)) => {
                expect.error = Some(ExpectError {
                    range: 0..0,
                    kind: Some(unplaced(error.kind.as_str().to_owned())),
                    message: Some(unplaced(error.message.clone())),
                    message_contains: None,
                });
            }
            (Some(result), None) => expect.result = Some(unplaced(result.clone())),
            (None, None) => expect.no_result = Some(unplaced(true)),
        }
        Case {
            name: Some(unplaced(name.to_owned())),
            range: 0..0,
            args: args.to_owned(),
            seed: Some(seed),
            store: self
                .store
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .map(|(path, text)| (unplaced(path.clone()), text.clone()))
                .collect(),
            model: (!rounds.is_empty()).then_some(rounds),
            tools: self
                .tools
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
            input: self
                .input
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
            live: false,
            repeat: None,
            min_pass: None,
            expect,
        }
    }

    fn round(&self, reply: &ModelReply) {
        let round = if reply.tool_calls.is_empty() {
            Round::Text(reply.content.clone())
        } else {
            Round::Calls(
                reply
                    .tool_calls
                    .iter()
                    .map(|call| ScriptedCall {
                        alias: unplaced(call.name.clone()),
                        arguments: call.arguments.clone(),
                    })
                    .collect(),
            )
        };
        self.rounds
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(round);
    }

    fn answer(&self, path: &str, answer: Answer) {
        let mut tools = self.tools.lock().unwrap_or_else(PoisonError::into_inner);
        match tools.iter_mut().find(|t| t.path.value == path) {
            Some(tool) => tool.answers.push(answer),
            None => tools.push(ScriptedTool {
                path: unplaced(path.to_owned()),
                answers: vec![answer],
            }),
        }
    }
}

/// A Host model whose replies are recorded.
struct RecordingModel {
    inner: Arc<dyn ModelProvider>,
    recorder: Arc<Recorder>,
}

#[async_trait]
impl ModelProvider for RecordingModel {
    fn kind(&self) -> &str {
        self.inner.kind()
    }

    async fn complete(
        &self,
        request: &ModelRequest,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        let reply = self.inner.complete(request, cancel).await?;
        self.recorder.round(&reply);
        Ok(reply)
    }

    fn wire_request(&self, request: &ModelRequest) -> Option<crate::trace::WireRequest> {
        self.inner.wire_request(request)
    }
}

/// The hook of a recorded run's tools: the real call, its answer kept.
struct RecordingCalls(Arc<Recorder>);

#[async_trait]
impl CallHook for RecordingCalls {
    async fn call(
        &self,
        tool: &Arc<dyn Tool>,
        arguments: &str,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let answer = tool.call(arguments, cancel).await;
        if !cancel.is_cancelled() {
            let recorded = match &answer {
                Ok(output) => Answer::Output(output.text.clone()),
                Err(error) => Answer::Error(error.message.clone()),
            };
            self.0.answer(tool.id().as_str(), recorded);
        }
        answer
    }
}

/// The operator, whose answers are recorded.
struct RecordingInput {
    inner: Arc<dyn InputBroker>,
    recorder: Arc<Recorder>,
}

#[async_trait]
impl InputBroker for RecordingInput {
    async fn ask(&self, question: &str) -> Result<String, InputError> {
        let answer = self.inner.ask(question).await?;
        self.recorder
            .input
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(answer.clone());
        Ok(answer)
    }
}
