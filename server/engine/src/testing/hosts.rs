//! Hosts for tests: the scripted model (plain or recording every request), a Host
//! with a scripted model and one Plugin, and a Plugin activation.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use promptforge_syntax::test_file::Round;
use tokio_util::sync::CancellationToken;

use super::tools::{FixedPlugin, TestTool};
use crate::harness::{Activation, Services};
use crate::models::script::{parse_turns, ScriptProvider};
use crate::models::{ModelError, ModelProvider, ModelReply, ModelRequest};
use crate::{Host, Store};

/// The name the scripted model is registered under.
pub const SCRIPTED: &str = "scripted";

/// The requests a [`Recorder`] received, in order.
pub type Requests = Arc<Mutex<Vec<ModelRequest>>>;

/// The scripted model, recording every request it gets.
pub struct Recorder {
    inner: ScriptProvider,
    /// Every request, in order.
    pub requests: Requests,
}

impl Recorder {
    /// The script `turns`, recording into a new, empty list.
    pub fn new(turns: Vec<Round>) -> Self {
        Recorder {
            inner: ScriptProvider::new(turns),
            requests: Arc::new(Mutex::new(Vec::new())),
        }
    }
}

#[async_trait]
impl ModelProvider for Recorder {
    fn kind(&self) -> &str {
        "script"
    }
    async fn complete(
        &self,
        request: &ModelRequest,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        self.requests.lock().unwrap().push(request.clone());
        self.inner.complete(request, cancel).await
    }
}

/// Registers the script `turns` on `host` as the model [`SCRIPTED`], its default.
pub fn add_script(host: &mut Host, turns: Vec<Round>) {
    host.add_model(SCRIPTED, Arc::new(ScriptProvider::new(turns)));
    host.set_default_model(SCRIPTED);
}

/// The offline Host whose default model answers `replies` rounds with text
/// (`reply 0`, `reply 1`, ...), for benches of model rounds.
pub fn replying(replies: usize) -> Arc<Host> {
    let mut host = Host::offline();
    add_script(
        &mut host,
        (0..replies)
            .map(|i| Round::Text(format!("reply {i}")))
            .collect(),
    );
    Arc::new(host)
}

/// The offline Host whose default model is the script `turns` (YAML, as in
/// `testing.md`'s `model:` list).
pub fn scripted(turns: &str) -> Host {
    let mut host = Host::offline();
    add_script(&mut host, parse_turns(turns).expect("turns"));
    host
}

/// A Host with the recording scripted model `turns` as its default and a Plugin
/// `plugin` holding `tools`; the recorded requests beside it.
pub struct TestHost {
    /// The Host.
    pub host: Host,
    /// The model's requests.
    pub requests: Requests,
}

impl TestHost {
    /// The Host.
    pub fn new(turns: &str, plugin: &str, tools: Vec<TestTool>) -> Self {
        let mut host = Host::offline();
        let recorder = Recorder::new(parse_turns(turns).expect("turns"));
        let requests = recorder.requests.clone();
        host.add_model(SCRIPTED, Arc::new(recorder));
        host.set_default_model(SCRIPTED);
        host.harness_mut()
            .register(Arc::new(FixedPlugin::with_tools(plugin, tools)));
        TestHost { host, requests }
    }

    /// The offered tool names of each request.
    pub fn offered(requests: &Requests) -> Vec<Vec<String>> {
        requests
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.tools.iter().map(|t| t.name.clone()).collect())
            .collect()
    }
}

/// An activation with an in-memory filesystem, no services and `cancel`.
pub fn activation(cancel: &CancellationToken) -> Activation {
    Activation::new(
        Arc::new(Store::in_memory()),
        cancel.clone(),
        Services::default(),
    )
}
