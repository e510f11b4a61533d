//! Counting a reply's tokens (OpenAI `o200k_base`) for `--tokens`. The
//! vocabulary is 32 MB, more than half of the binary, so it is an opt-in
//! cargo feature (`tokens`): a default install leaves it out.

use std::thread::JoinHandle;

use crate::Error;

/// Start counting `reply`'s tokens on another thread: the vocabulary loads
/// on another core while the edits are applied.
#[cfg(feature = "tokens")]
pub fn count_in_background(reply: &str) -> Result<JoinHandle<usize>, Error> {
    let reply = reply.to_string();
    Ok(std::thread::spawn(move || bpe_openai::o200k_base().count(&reply)))
}

/// Without the vocabulary, `--tokens` is refused with how to get it.
#[cfg(not(feature = "tokens"))]
pub fn count_in_background(_reply: &str) -> Result<JoinHandle<usize>, Error> {
    Err(Error::TokensLeftOut)
}
