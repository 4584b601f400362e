//! `ape-chat bench index DIR`: how long a folder takes to be ready, stage
//! by stage, documents only (the default) beside every text file
//! (`--all-files`, what indexing read before the documents-only rules).
//! Scan and read (extract, chunk, tokenize) are timed whole; vectors and
//! states on a sample of the folder's own chunks, vectors with one thread
//! and with every core side by side, states as the states stage writes
//! them (encoded after the prefix, compacted, stored); the time to every
//! state cached is the read time plus each sample's rate over the whole.
//! One computation at a time: nothing here runs beside anything else.

use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;

use super::BenchError;
use crate::engine::{Engine, PromptLayout};
use crate::index::dense::{EmbedOptions, Embedder};
use crate::index::dry_run::dry_run;
use crate::index::IndexProgress;
use crate::ingest::{walk, Chunk, Filters};
use crate::kvstore::KvStore;
use crate::states::States;
use crate::workspace::FolderOptions;

pub struct IndexBenchOptions {
    pub folder: PathBuf,
    pub folder_options: FolderOptions,
    /// Chunks embedded per thread count.
    pub vector_sample: usize,
    /// Chunks whose state is encoded.
    pub state_sample: usize,
}

/// What one way of choosing files reads.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Selection {
    pub files: usize,
    pub skipped: usize,
    pub bytes: u64,
    pub chunks: usize,
    pub tokens: usize,
    /// Walking the folder.
    pub scan_s: f64,
    /// Reading, extracting, chunking and tokenizing the files.
    pub read_s: f64,
    /// Read time, then vectors and states at the sampled rates.
    pub ready_s: f64,
}

/// Embedding speed with `threads` ONNX Runtime threads.
#[derive(Clone, Debug, Serialize)]
pub struct VectorRate {
    pub threads: usize,
    pub chunks: usize,
    pub seconds: f64,
    pub chunks_per_s: f64,
}

/// State encoding speed (encode, compact, store).
#[derive(Clone, Debug, Default, Serialize)]
pub struct StateRate {
    pub chunks: usize,
    pub tokens: usize,
    pub seconds: f64,
    pub tokens_per_s: f64,
    pub bytes: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct IndexBench {
    pub folder: String,
    pub documents: Selection,
    pub all_files: Selection,
    pub vectors: Vec<VectorRate>,
    pub states: StateRate,
}

/// Runs the benchmark; `say` gets a line per step.
pub fn index_bench(
    engine: &Engine,
    o: &IndexBenchOptions,
    say: &mut dyn FnMut(&str),
) -> Result<IndexBench, BenchError> {
    let fo = &o.folder_options;
    let layout = PromptLayout::new(engine, &fo.system_prompt)?.pad(engine, fo.prefix_newlines);
    // Scan and read, timed whole; the chunks a selection indexes.
    let select = |filters: &Filters| -> Result<(Selection, Vec<Chunk>), BenchError> {
        let t = Instant::now();
        let (files, _) =
            walk(&o.folder, filters).map_err(|e| BenchError::Setup(format!("walk: {e}")))?;
        let scan_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let count = |s: &str| engine.tokenize(s).len();
        let encoded = |s: &str| layout.chunk(engine, s).len();
        let mut kept = Vec::new();
        let plan = dry_run(
            &o.folder,
            filters,
            &fo.extraction,
            fo.chunk_tokens,
            &count,
            &encoded,
            &mut |c| kept.push(c.clone()),
            &mut |_: IndexProgress| {},
        )
        .map_err(|e| BenchError::Setup(e.to_string()))?;
        let read_s = t.elapsed().as_secs_f64();
        let read: std::collections::HashSet<&str> =
            plan.read.iter().map(|r| r.path.as_str()).collect();
        let selection = Selection {
            files: plan.read.len(),
            skipped: plan.skipped.len(),
            bytes: files
                .iter()
                .filter(|f| read.contains(f.rel.as_str()))
                .map(|f| f.size)
                .sum(),
            chunks: plan.chunks,
            tokens: plan.tokens,
            scan_s,
            read_s,
            ready_s: 0.0,
        };
        Ok((selection, kept))
    };
    say("reading the folder, documents only");
    let (mut documents, documents_chunks) = select(&Filters {
        all_files: false,
        ..fo.filters.clone()
    })?;
    say("reading the folder, every text file");
    let (mut all_files, _) = select(&Filters {
        all_files: true,
        ..fo.filters.clone()
    })?;
    if documents_chunks.is_empty() {
        return Err(BenchError::Setup(format!(
            "no documents in {}",
            o.folder.display()
        )));
    }
    let sample = |n: usize| -> Vec<&Chunk> {
        let n = n.clamp(1, documents_chunks.len());
        let step = documents_chunks.len() as f64 / n as f64;
        (0..n)
            .map(|i| &documents_chunks[(i as f64 * step) as usize])
            .collect()
    };

    // Vectors: one thread, then every core, on the same chunks.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let texts: Vec<&str> = sample(o.vector_sample)
        .iter()
        .map(|c| c.text.as_str())
        .collect();
    let mut vectors = Vec::new();
    let mut counts = vec![1];
    if cores > 1 {
        counts.push(cores);
    }
    for threads in counts {
        say(&format!(
            "embedding {} chunks with {threads} thread(s)",
            texts.len()
        ));
        let mut embedder = Embedder::load(&EmbedOptions {
            threads,
            ..fo.embed.clone()
        })
        .map_err(|e| BenchError::Setup(e.to_string()))?;
        // Warm: the first batch pays for ONNX Runtime's own set-up.
        embedder
            .embed(&texts[..texts.len().min(16)])
            .map_err(|e| BenchError::Setup(e.to_string()))?;
        let t = Instant::now();
        for batch in texts.chunks(64) {
            embedder
                .embed(batch)
                .map_err(|e| BenchError::Setup(e.to_string()))?;
        }
        let seconds = t.elapsed().as_secs_f64();
        vectors.push(VectorRate {
            threads,
            chunks: texts.len(),
            seconds,
            chunks_per_s: texts.len() as f64 / seconds.max(1e-9),
        });
    }

    // States: encoded, compacted and stored as the states stage does, into
    // a scratch store.
    let scratch = tempfile_dir()?;
    let states = States::new(engine, layout.clone(), KvStore::new(scratch.path()))?;
    let mut session = engine.session()?;
    let chunks = sample(o.state_sample);
    say(&format!("encoding {} chunk states", chunks.len()));
    let mut rate = StateRate::default();
    let t = Instant::now();
    for c in &chunks {
        let tokens = states.chunk_tokens(&c.text);
        rate.tokens += tokens.len();
        let (_, stored) = states.encode(&mut session, &tokens, false)?;
        let key = stored.map_err(|e| BenchError::Setup(format!("storing a state: {e}")))?;
        rate.bytes += std::fs::metadata(states.store.path(&key)).map_or(0, |m| m.len());
        rate.chunks += 1;
    }
    rate.seconds = t.elapsed().as_secs_f64();
    rate.tokens_per_s = rate.tokens as f64 / rate.seconds.max(1e-9);

    let best = vectors
        .iter()
        .map(|v| v.chunks_per_s)
        .fold(0.0f64, f64::max)
        .max(1e-9);
    for s in [&mut documents, &mut all_files] {
        s.ready_s = s.scan_s
            + s.read_s
            + s.chunks as f64 / best
            + s.tokens as f64 / rate.tokens_per_s.max(1e-9);
    }
    Ok(IndexBench {
        folder: o.folder.display().to_string(),
        documents,
        all_files,
        vectors,
        states: rate,
    })
}

/// A scratch directory for the states the benchmark writes.
fn tempfile_dir() -> Result<ScratchDir, BenchError> {
    let path = std::env::temp_dir().join(format!(
        "ape-chat-bench-index-{}-{}",
        std::process::id(),
        Instant::now().elapsed().as_nanos()
    ));
    std::fs::create_dir_all(&path)?;
    Ok(ScratchDir(path))
}

/// Removed when dropped.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
