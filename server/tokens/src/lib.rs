//! Token counts for a model: the OpenAI encodings (`tiktoken-rs`) for the models
//! that use them, and `o200k_base` as the estimate for every other model (a
//! provider's own tokenizer is not public for most). Every count made here is an
//! estimate beside what a provider reports; the encodings load on first use
//! (about 120 ms and 45 MiB for `o200k_base`) and stay for the process.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

/// An encoding a count is made with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// GPT-4o, GPT-4.1, GPT-5 and the o-series; the estimate for other models.
    O200kBase,
    /// GPT-4 and GPT-3.5.
    Cl100kBase,
}

impl Encoding {
    /// The encoding's name (`o200k_base`).
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }

    /// The encoding of the provider's model name `model`: the one it uses when it
    /// is an OpenAI model this knows, else `o200k_base` as an estimate.
    pub fn for_model(model: &str) -> Encoding {
        let model = model.rsplit('/').next().unwrap_or(model);
        let cl100k = ["gpt-4-", "gpt-3.5", "gpt-35"];
        if model == "gpt-4"
            || cl100k.iter().any(|p| model.starts_with(p)) && !model.starts_with("gpt-4o")
        {
            Encoding::Cl100kBase
        } else {
            Encoding::O200kBase
        }
    }

    fn bpe(self) -> Option<&'static CoreBPE> {
        static O200K: OnceLock<Option<CoreBPE>> = OnceLock::new();
        static CL100K: OnceLock<Option<CoreBPE>> = OnceLock::new();
        match self {
            Encoding::O200kBase => O200K.get_or_init(|| tiktoken_rs::o200k_base().ok()),
            Encoding::Cl100kBase => CL100K.get_or_init(|| tiktoken_rs::cl100k_base().ok()),
        }
        .as_ref()
    }

    /// The tokens of `text` (special tokens counted as plain text); None when the
    /// encoding cannot load.
    pub fn count(self, text: &str) -> Option<u64> {
        let bpe = self.bpe()?;
        COUNTED.fetch_add(text.len() as u64, Ordering::Relaxed);
        Some(bpe.encode_ordinary(text).len() as u64)
    }
}

/// The bytes of text counted so far.
static COUNTED: AtomicU64 = AtomicU64::new(0);

/// The bytes of text this process has counted tokens of so far: the work
/// counting costs, for tests and benches that bound it.
pub fn bytes_counted() -> u64 {
    COUNTED.load(Ordering::Relaxed)
}

/// The tokens a chat request's framing adds per message (its role and
/// separators), as OpenAI's chat format counts them.
pub const PER_MESSAGE: u64 = 3;

/// The tokens that prime the reply at the end of a chat request.
pub const REPLY_PRIMING: u64 = 3;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_get_their_encodings() {
        assert_eq!(Encoding::for_model("gpt-4o-mini"), Encoding::O200kBase);
        assert_eq!(Encoding::for_model("gpt-4-turbo"), Encoding::Cl100kBase);
        assert_eq!(Encoding::for_model("gpt-4"), Encoding::Cl100kBase);
        assert_eq!(Encoding::for_model("gpt-3.5-turbo"), Encoding::Cl100kBase);
        assert_eq!(Encoding::for_model("claude-sonnet-4"), Encoding::O200kBase);
        assert_eq!(Encoding::for_model("openai/gpt-4.1"), Encoding::O200kBase);
    }

    #[test]
    fn counts_are_the_encodings() {
        // "hello world" is two tokens in both encodings.
        assert_eq!(Encoding::O200kBase.count("hello world"), Some(2));
        assert_eq!(Encoding::Cl100kBase.count("hello world"), Some(2));
        assert_eq!(Encoding::O200kBase.count(""), Some(0));
    }
}
