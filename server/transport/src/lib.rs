//! The transport both of PromptForge's protocols use over stdin/stdout: the
//! language server (`promptforge lsp`) and the debug adapter (`promptforge dap`)
//! frame their messages the same way (`Content-Length` headers, then a JSON
//! body), with the same limits and the same judge of bodies that are not
//! messages. Neither front end borrows the other's internals: both use this
//! crate, which knows nothing of either protocol's meaning.

pub mod framing;

/// The text of a panic's payload: its message when it has one.
pub fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::payload_text;

    #[test]
    fn a_panics_message_is_its_text() {
        let caught = |f: fn()| std::panic::catch_unwind(f).expect_err("it panics");
        assert_eq!(payload_text(&*caught(|| panic!("static"))), "static");
        assert_eq!(payload_text(&*caught(|| panic!("{}", 4))), "4");
        let other = std::panic::catch_unwind(|| std::panic::panic_any(7u8)).expect_err("it panics");
        assert_eq!(payload_text(&*other), "a panic without a message");
    }
}
