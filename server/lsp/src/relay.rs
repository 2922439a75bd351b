//! tower-lsp's output on its way to the client: read back into whole bodies
//! and queued for the one writer of stdout, opening a run's gate when the
//! response that names the run has been queued.

use promptforge_transport::framing::FrameReader;
use tokio::io::AsyncRead;
use tokio::sync::mpsc;

/// Reads tower-lsp's output and queues each whole body on `bodies`, until the
/// output ends (tower-lsp's frames have no length limit); a queued response that
/// names a run opens that run's gate ([`crate::run::gate`]).
pub async fn relay<R: AsyncRead + Unpin>(
    from_server: R,
    bodies: mpsc::Sender<Vec<u8>>,
    gates: crate::run::gate::Gates,
) {
    let mut frames = FrameReader::with_limit(from_server, usize::MAX);
    while let Ok(Some(body)) = frames.next_frame().await {
        let opens = gates.opened_by(&body);
        if bodies.send(body).await.is_err() {
            break;
        }
        if let Some(run_id) = opens {
            gates.open(&run_id);
        }
    }
}
