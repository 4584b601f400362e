//! What a shared state store saves (`ape-chat bench store`): per question,
//! the time to first token with its chunk states encoded here, fetched
//! from the store into an empty local cache (a second machine's case), and
//! read from the local disk cold (the usual case), side by side in one
//! run over the same folder, questions and retrieval; and the store's read
//! throughput. The memory tiers are off, so every answer reads its states
//! from where it is measured. Each question's states go under a namespace
//! of their own in the store (deleted at the end), so no question finds
//! another's, and the user's keys are left alone.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use serde::Serialize;

use super::{BenchError, ScratchDir};
use crate::answer::AskOptions;
use crate::engine::Engine;
use crate::kvstore::KvStore;
use crate::statestore::SharedStore;
use crate::workspace::{FolderOptions, Workspace};

/// What to run.
#[derive(Clone, Debug)]
pub struct StoreBenchOptions {
    pub folder: PathBuf,
    pub folder_options: FolderOptions,
    pub ask: AskOptions,
    pub questions: Vec<String>,
    pub url: String,
}

/// One question's three answers.
#[derive(Clone, Debug, Serialize)]
pub struct QuestionTimes {
    pub question: String,
    pub states: usize,
    /// States encoded here (an empty cache, an empty store).
    pub encode_ttft_ms: f64,
    /// States fetched from the store into an empty local cache.
    pub store_ttft_ms: f64,
    /// States read from the local disk, cold (not in the page cache).
    pub disk_ttft_ms: f64,
    /// What the store read cost: bytes and time.
    pub store_bytes: u64,
    pub store_ms: f64,
    /// The three answers were the same text.
    pub same_answer: bool,
}

/// The figures.
#[derive(Clone, Debug, Serialize)]
pub struct StoreReport {
    pub machine: String,
    pub model: String,
    pub store: String,
    pub mode: String,
    pub questions: Vec<QuestionTimes>,
    pub median_encode_ms: f64,
    pub median_store_ms: f64,
    pub median_disk_ms: f64,
    /// Bytes read from the store over the time those reads took.
    pub store_read_mb_per_s: f64,
    /// Bytes of one state per token, on average (what the store holds per
    /// token of the folder).
    pub state_bytes_per_token: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Runs it. `engine` should have its memory tiers off (so answers read
/// states from where they are measured).
pub fn store_bench(
    engine: &Engine,
    o: &StoreBenchOptions,
    say: &mut dyn FnMut(&str),
) -> Result<StoreReport, BenchError> {
    let fail = |e: String| BenchError::Setup(e);
    let scratch = ScratchDir::new("store")?;
    let folder = o.folder.canonicalize()?;
    let mut rows = Vec::new();
    let (mut bytes, mut ms, mut tokens) = (0u64, 0.0f64, 0usize);
    for (i, q) in o.questions.iter().enumerate() {
        let ns = format!("ape-chat:bench:{}:{i}:", std::process::id());
        let shared = SharedStore::open_in(&o.url, &ns).map_err(|e| fail(e.to_string()))?;
        let dir = |what: &str| scratch.0.join(format!("{what}-{i}"));
        let open = |index: &Path, kv: KvStore| {
            Workspace::open_in(
                engine,
                &folder,
                Some(index.to_path_buf()),
                &o.folder_options,
                kv,
            )
            .map_err(|e| fail(e.to_string()))
        };
        let ask = |ws: &mut Workspace<'_>| -> Result<crate::answer::Answer, BenchError> {
            ws.refresh_text(&AtomicBool::new(false), &mut |_| {})
                .map_err(|e| fail(e.to_string()))?;
            ws.ask(q, &[], &o.ask, &mut |_| true)
                .map_err(|e| fail(e.to_string()))
        };
        say(&format!("question {}: encoding its states", i + 1));
        let encoded = {
            let kv = KvStore::new(dir("kv-a")).with_shared(Some(shared.clone()));
            let mut ws = open(&dir("index-a"), kv)?;
            let a = ask(&mut ws)?;
            drop(ws); // flushes the offers to the store
            a
        };
        if encoded.states.computed() == 0 {
            return Err(fail(format!("question {}: no state was encoded", i + 1)));
        }
        say(&format!("question {}: states from the store", i + 1));
        let fetched = {
            let kv = KvStore::new(dir("kv-b")).with_shared(Some(shared.clone()));
            let mut ws = open(&dir("index-b"), kv)?;
            ask(&mut ws)?
        };
        if fetched.states.from_store != encoded.states.computed() {
            return Err(fail(format!(
                "question {}: {} states encoded, {} fetched from the store",
                i + 1,
                encoded.states.computed(),
                fetched.states.from_store
            )));
        }
        say(&format!(
            "question {}: states from the local disk, cold",
            i + 1
        ));
        let disk = {
            let files: Vec<PathBuf> = walk_files(&dir("kv-b"));
            super::drop_from_page_cache(&files);
            let mut ws = open(&dir("index-b"), KvStore::new(dir("kv-b")))?;
            ask(&mut ws)?
        };
        let _ = shared.clear_namespace();
        bytes += fetched.states.store_bytes;
        ms += fetched.states.store_ms;
        tokens += fetched
            .sources
            .iter()
            .map(|s| s.chunk.tokens)
            .sum::<usize>();
        let ms_of = |d: Duration| d.as_secs_f64() * 1e3;
        rows.push(QuestionTimes {
            question: q.clone(),
            states: fetched.states.from_store,
            encode_ttft_ms: ms_of(encoded.ttft),
            store_ttft_ms: ms_of(fetched.ttft),
            disk_ttft_ms: ms_of(disk.ttft),
            store_bytes: fetched.states.store_bytes,
            store_ms: fetched.states.store_ms,
            same_answer: encoded.generated.text == fetched.generated.text
                && fetched.generated.text == disk.generated.text,
        });
    }
    Ok(StoreReport {
        machine: super::machine(engine),
        model: engine
            .path()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        store: crate::statestore::redact(&o.url),
        mode: o.ask.mode.to_string(),
        median_encode_ms: median(rows.iter().map(|r| r.encode_ttft_ms).collect()),
        median_store_ms: median(rows.iter().map(|r| r.store_ttft_ms).collect()),
        median_disk_ms: median(rows.iter().map(|r| r.disk_ttft_ms).collect()),
        store_read_mb_per_s: if ms > 0.0 {
            bytes as f64 / 1e6 / (ms / 1e3)
        } else {
            0.0
        },
        state_bytes_per_token: if tokens > 0 {
            bytes as f64 / tokens as f64
        } else {
            0.0
        },
        questions: rows,
    })
}

fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}
