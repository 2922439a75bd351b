//! A run's work-done progress, for a client whose capabilities say
//! `window.workDoneProgress`: `window/workDoneProgress/create` with the run's id
//! as the token, then `$/progress` begin (`Running {prompt}`, cancellable),
//! a report each time the status changes (the section, the model round, the tool
//! in flight), and end. The client's `window/workDoneProgress/cancel` for the
//! token cancels the run (the server's handler).

use std::time::Duration;

use tokio::sync::{oneshot, watch};
use tower_lsp::lsp_types::notification::Progress;
use tower_lsp::lsp_types::request::WorkDoneProgressCreate;
use tower_lsp::lsp_types::{
    NumberOrString, ProgressParams, ProgressParamsValue, WorkDoneProgress, WorkDoneProgressBegin,
    WorkDoneProgressCreateParams, WorkDoneProgressEnd, WorkDoneProgressReport,
};
use tower_lsp::Client;

/// How long the client may take to create the progress before the run goes
/// without it.
pub const CREATE_TIMEOUT: Duration = Duration::from_secs(10);

/// The progress token of the run `run_id`: its id.
pub fn token(run_id: &str) -> NumberOrString {
    NumberOrString::String(run_id.to_owned())
}

/// The run a progress token names.
pub fn run_of(token: &NumberOrString) -> Option<&str> {
    match token {
        NumberOrString::String(run_id) => Some(run_id),
        NumberOrString::Number(_) => None,
    }
}

async fn send(client: &Client, token: &NumberOrString, progress: WorkDoneProgress) {
    let params = ProgressParams {
        token: token.clone(),
        value: ProgressParamsValue::WorkDone(progress),
    };
    client.send_notification::<Progress>(params).await;
}

/// Drives the progress of `run_id` titled `title`: reports each new `status`
/// message until `ended` gives the last one.
pub async fn drive(
    client: Client,
    run_id: String,
    title: String,
    mut status: watch::Receiver<String>,
    mut ended: oneshot::Receiver<String>,
) {
    let token = token(&run_id);
    // Detached: the run may end before the client answers (tower-lsp would die
    // of an answer to a dropped request).
    let create =
        crate::client_request::answer(crate::client_request::detached::<WorkDoneProgressCreate>(
            &client,
            WorkDoneProgressCreateParams {
                token: token.clone(),
            },
        ));
    let created = tokio::select! {
        created = tokio::time::timeout(CREATE_TIMEOUT, create) => matches!(created, Ok(Ok(()))),
        _ = &mut ended => false,
    };
    if !created {
        return;
    }
    let message = {
        let current = status.borrow_and_update();
        (!current.is_empty()).then(|| current.clone())
    };
    let begin = WorkDoneProgressBegin {
        title,
        cancellable: Some(true),
        message,
        percentage: None,
    };
    send(&client, &token, WorkDoneProgress::Begin(begin)).await;
    loop {
        tokio::select! {
            biased;
            last = &mut ended => {
                let end = WorkDoneProgressEnd { message: last.ok() };
                send(&client, &token, WorkDoneProgress::End(end)).await;
                return;
            }
            changed = status.changed() => {
                if changed.is_err() {
                    // The run's listener is gone: only the end is left to come.
                    let end = WorkDoneProgressEnd { message: (&mut ended).await.ok() };
                    send(&client, &token, WorkDoneProgress::End(end)).await;
                    return;
                }
                let message = status.borrow_and_update().clone();
                let report = WorkDoneProgressReport {
                    cancellable: Some(true),
                    message: Some(message),
                    percentage: None,
                };
                send(&client, &token, WorkDoneProgress::Report(report)).await;
            }
        }
    }
}
