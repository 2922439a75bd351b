//! The order of diagnostics publications: a publication that read the server's
//! state (a Plugin's activation, the configuration, the runs' failures) before
//! another publication of the same document is never published after it.
//!
//! A publication takes a ticket before it reads any state; when it is ready to
//! publish it asks to be admitted, and is refused when a later ticket already
//! published that document: the later one read state at least as new.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use tower_lsp::lsp_types::Url;

/// Tickets handed out, and the last one published for each document.
#[derive(Default)]
pub struct PublishOrder {
    next: AtomicU64,
    published: Mutex<HashMap<Url, u64>>,
}

/// A publication's place in line, taken before it reads any state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ticket(u64);

impl PublishOrder {
    /// A ticket later than every ticket taken before.
    pub fn ticket(&self) -> Ticket {
        Ticket(self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// Whether the publication holding `ticket` may publish `uri`: no later
    /// ticket has published it. Admitting it records it as the last published.
    /// The caller holds the publishing lock until it has sent the publication.
    pub fn admit(&self, uri: &Url, ticket: Ticket) -> bool {
        let mut published = self.published.lock().unwrap_or_else(|e| e.into_inner());
        match published.get_mut(uri) {
            Some(last) if *last > ticket.0 => false,
            Some(last) => {
                *last = ticket.0;
                true
            }
            None => {
                published.insert(uri.clone(), ticket.0);
                true
            }
        }
    }

    /// Forgets `uri` (it closed): whatever publishes it next is admitted.
    pub fn forget(&self, uri: &Url) {
        let mut published = self.published.lock().unwrap_or_else(|e| e.into_inner());
        published.remove(uri);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uri(name: &str) -> Url {
        Url::parse(&format!("file:///w/{name}")).unwrap()
    }

    #[test]
    fn a_publication_that_read_state_first_is_refused_after_a_later_one_published() {
        let order = PublishOrder::default();
        let opened = order.ticket(); // reads the Plugin as pending, slowly
        let activated = order.ticket(); // reads it active, quickly
        assert!(order.admit(&uri("broken.md"), activated));
        assert!(!order.admit(&uri("broken.md"), opened));
    }

    #[test]
    fn publications_in_ticket_order_are_all_admitted() {
        let order = PublishOrder::default();
        let first = order.ticket();
        let second = order.ticket();
        assert!(order.admit(&uri("a.md"), first));
        assert!(order.admit(&uri("a.md"), second));
        assert!(order.admit(&uri("a.md"), second), "the same ticket again");
    }

    #[test]
    fn each_document_has_its_own_order() {
        let order = PublishOrder::default();
        let early = order.ticket();
        let late = order.ticket();
        assert!(order.admit(&uri("a.md"), late));
        assert!(order.admit(&uri("b.md"), early));
    }

    #[test]
    fn a_closed_document_is_forgotten() {
        let order = PublishOrder::default();
        let early = order.ticket();
        let late = order.ticket();
        assert!(order.admit(&uri("a.md"), late));
        order.forget(&uri("a.md"));
        assert!(order.admit(&uri("a.md"), early));
    }
}
