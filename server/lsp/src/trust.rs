//! The session's trust (`editor.md`, `host.md` §1.1): what the client said in
//! `initializationOptions.trusted`. `true`: every project configuration is
//! trusted. `false` (VS Code's Restricted Mode, a configuration Neovim's
//! `vim.secure` denied): none is, no run starts and no run lens is offered.
//! Absent: a project configuration is trusted when `promptforge trust` recorded
//! it with its content, else its acting keys are withheld.

use std::sync::OnceLock;

use promptforge_engine::host::TrustPolicy;

/// The `initializationOptions` key that carries the client's trust.
pub const TRUSTED_OPTION: &str = "trusted";

/// The refusal of a run, a test or a debug session in a workspace the client
/// said is not trusted.
pub const RESTRICTED: &str = "this workspace is not trusted, so prompts and their tests do not run here (trust the workspace in the editor, then try again)";

/// What the client said of the workspace's trust.
#[derive(Debug, Default)]
pub struct SessionTrust {
    client: OnceLock<Option<bool>>,
}

impl SessionTrust {
    /// Records the client's `initializationOptions.trusted` (once).
    pub fn set(&self, trusted: Option<bool>) {
        let _ = self.client.set(trusted);
    }

    fn client(&self) -> Option<bool> {
        self.client.get().copied().flatten()
    }

    /// True when the client said the workspace is not trusted.
    pub fn restricted(&self) -> bool {
        self.client() == Some(false)
    }

    /// Which project configurations are trusted.
    pub fn policy(&self) -> TrustPolicy {
        match self.client() {
            Some(true) => TrustPolicy::All,
            Some(false) => TrustPolicy::Nothing,
            None => TrustPolicy::from_env(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_decides_and_absent_means_the_records() {
        let trust = SessionTrust::default();
        assert!(!trust.restricted());
        assert!(matches!(
            trust.policy(),
            TrustPolicy::Recorded(_) | TrustPolicy::All
        ));
        let trust = SessionTrust::default();
        trust.set(Some(false));
        assert!(trust.restricted());
        assert!(matches!(trust.policy(), TrustPolicy::Nothing));
        let trust = SessionTrust::default();
        trust.set(Some(true));
        assert!(!trust.restricted());
        assert!(matches!(trust.policy(), TrustPolicy::All));
    }
}
