//! Evaluation: how close each mode's answers come to sequential prefill.
//!
//! - [`datasets`]: records and the datasets they come from (SQuAD);
//! - [`docs`]: questions over real documentation folders, answered as
//!   `--ask` answers them;
//! - [`rank`]: a record's contexts ranked as retrieval would;
//! - [`run`]: one record answered in several modes, scored, stamped;
//! - [`results`]: resumable runs over a dataset;
//! - [`score`], [`stats`]: EM/F1 and paired bootstrap intervals;
//! - [`calibrate`]: choosing APE's settings for a model, honestly.

pub mod calibrate;
pub mod datasets;
pub mod docs;
pub mod rank;
pub mod results;
pub mod run;
pub mod score;
pub mod stats;

/// KV cells a context needs for the widest of `records` (a generous bound:
/// two bytes of text per token, prefix, question and answer).
pub fn context_for(records: &[datasets::Record], max_tokens: usize) -> u32 {
    let widest = records
        .iter()
        .map(|r| r.contexts.iter().map(|c| c.len() / 2 + 16).sum::<usize>())
        .max()
        .unwrap_or(0);
    (widest + 1024 + max_tokens).next_multiple_of(256) as u32
}

/// This build: the crate version and a hash of the running executable, so
/// a results row says which code made it even between commits.
pub fn code_version() -> &'static str {
    static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    VERSION.get_or_init(|| {
        let build = std::env::current_exe()
            .and_then(std::fs::read)
            .map(|b| blake3::hash(&b).to_hex()[..12].to_string())
            .unwrap_or_else(|_| "unknown".into());
        format!("{}+{build}", env!("CARGO_PKG_VERSION"))
    })
}
