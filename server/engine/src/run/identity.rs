//! A run's identity: its untrusted nonce and its run id, from the OS's CSPRNG or,
//! with a seed, from a ChaCha stream seeded with it (`language.md` §6).

use chacha20::rand_core::{Rng, SeedableRng};
use chacha20::ChaCha20Rng;

use crate::messages;

/// The run's one nonce and its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunIdentity {
    /// 32 lowercase hex digits.
    pub nonce: String,
    /// `run-` and 16 lowercase hex digits.
    pub run_id: String,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl RunIdentity {
    /// The identity of a run: seeded runs are byte-for-byte repeatable.
    pub fn new(seed: Option<u64>) -> Result<Self, String> {
        let mut bytes = [0u8; 24];
        match seed {
            Some(seed) => ChaCha20Rng::seed_from_u64(seed).fill_bytes(&mut bytes),
            None => getrandom::fill(&mut bytes)
                .map_err(|e| format!("the operating system's random source failed: {e}"))?,
        }
        let (nonce, id) = bytes.split_at(16);
        Ok(RunIdentity {
            nonce: hex(nonce),
            run_id: format!("run-{}", hex(id)),
        })
    }

    /// `text` in the untrusted envelope with the run's nonce (§6).
    pub fn envelope(&self, text: &str) -> String {
        messages::untrusted_envelope(&self.nonce, text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_identities_repeat_and_differ_by_seed() {
        let a = RunIdentity::new(Some(7)).unwrap();
        assert_eq!(a, RunIdentity::new(Some(7)).unwrap());
        assert_ne!(a, RunIdentity::new(Some(8)).unwrap());
        assert_eq!(a.nonce.len(), 32);
        assert!(a
            .nonce
            .chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)));
        assert!(a.run_id.starts_with("run-") && a.run_id.len() == 20);
    }

    #[test]
    fn unseeded_identities_differ() {
        assert_ne!(
            RunIdentity::new(None).unwrap(),
            RunIdentity::new(None).unwrap()
        );
    }
}
