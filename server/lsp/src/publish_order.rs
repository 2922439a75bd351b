//! The order of diagnostics publications: a publication that read the server's
//! state (a Plugin's activation, the configuration, the runs' failures) before
//! another publication of the same document is never published after it.
//!
//! A publication takes a ticket before it reads any state; when it is ready to
//! publish it takes the publishing lock and asks to be admitted, and is refused
//! when a later ticket already published that document: the later one read
//! state at least as new.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::{Mutex, MutexGuard};
use tower_lsp::lsp_types::Url;

/// The publishing lock and the tickets handed out.
#[derive(Default)]
pub struct PublishOrder {
    next: AtomicU64,
    published: Mutex<Published>,
}

/// A publication's place in line, taken before it reads any state.
#[derive(Clone, Copy, Debug)]
pub struct Ticket(u64);

/// The last ticket that published each document, held under the publishing
/// lock: whoever holds it publishes, one at a time.
#[derive(Default)]
pub struct Published(HashMap<Url, u64>);

impl PublishOrder {
    /// A ticket later than every ticket taken before.
    pub fn ticket(&self) -> Ticket {
        Ticket(self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// Takes the publishing lock (held until the publication is sent).
    pub async fn lock(&self) -> MutexGuard<'_, Published> {
        self.published.lock().await
    }
}

impl Published {
    /// Whether the publication holding `ticket` may publish `uri`: no later
    /// ticket has published it. Admitting it records it as the last published.
    pub fn admit(&mut self, uri: &Url, ticket: Ticket) -> bool {
        match self.0.get_mut(uri) {
            Some(last) if *last > ticket.0 => false,
            Some(last) => {
                *last = ticket.0;
                true
            }
            None => {
                self.0.insert(uri.clone(), ticket.0);
                true
            }
        }
    }

    /// Forgets `uri` (it closed): whatever publishes it next is admitted. A
    /// publication of the closed document's versions never asks: it is no longer
    /// current ([`crate::documents::Documents::is_current`]), even when the
    /// document was reopened at the same version number.
    pub fn forget(&mut self, uri: &Url) {
        self.0.remove(uri);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uri(name: &str) -> Url {
        Url::parse(&format!("file:///w/{name}")).unwrap()
    }

    /// Two tickets taken in order, and the record of what published.
    fn two_tickets() -> (Ticket, Ticket, Published) {
        let order = PublishOrder::default();
        (order.ticket(), order.ticket(), Published::default())
    }

    #[test]
    fn a_publication_that_read_state_first_is_refused_after_a_later_one_published() {
        // The first reads the Plugin as pending, slowly; the second reads it active, quickly.
        let (opened, activated, mut published) = two_tickets();
        assert!(published.admit(&uri("broken.md"), activated));
        assert!(!published.admit(&uri("broken.md"), opened));
    }

    #[test]
    fn publications_in_ticket_order_are_all_admitted() {
        let (first, second, mut published) = two_tickets();
        assert!(published.admit(&uri("a.md"), first));
        assert!(published.admit(&uri("a.md"), second));
        assert!(
            published.admit(&uri("a.md"), second),
            "the same ticket again"
        );
    }

    #[test]
    fn each_document_has_its_own_order() {
        let (early, late, mut published) = two_tickets();
        assert!(published.admit(&uri("a.md"), late));
        assert!(published.admit(&uri("b.md"), early));
    }

    #[test]
    fn a_closed_document_is_forgotten() {
        let (early, late, mut published) = two_tickets();
        assert!(published.admit(&uri("a.md"), late));
        published.forget(&uri("a.md"));
        assert!(published.admit(&uri("a.md"), early));
    }
}
