//! `ape-chat index DIR`: bring a folder's index and KV-state cache up to
//! date, with a progress bar (stderr) or a JSON report (stdout).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use super::style::{bold, dim};
use super::{budget_bytes, expand_home, ModelArgs, CANCEL};
use crate::config::FileConfig;
use crate::engine::prompt::DEFAULT_SYSTEM_PROMPT;
use crate::engine::{Engine, PromptLayout};
use crate::index::dense::{EmbedOptions, Embedder};
use crate::index::{FolderIndex, IndexError, IndexProgress, UpdateReport};
use crate::ingest::Filters;
use crate::kvstore::KvStore;
use crate::states::States;

/// Flags shared by every command that reads a folder.
#[derive(Debug, Clone, Args)]
pub struct FolderArgs {
    /// Target chunk size in model tokens [default: 256].
    #[arg(long, env = "APE_CHAT_CHUNK_TOKENS", value_name = "N")]
    pub chunk_tokens: Option<usize>,
    #[command(flatten)]
    pub prefix: PrefixArgs,
    /// Sentence-embedding model directory (ONNX + tokenizer files).
    #[arg(long, env = "APE_CHAT_EMBED_MODEL", value_name = "DIR")]
    pub embed_model: Option<PathBuf>,
    /// ONNX Runtime library (`libonnxruntime.so`, ≥ 1.24).
    #[arg(long, env = "ORT_DYLIB_PATH", value_name = "PATH")]
    pub ort_lib: Option<PathBuf>,
    /// Only index files matching this glob (repeatable; gitignore syntax).
    #[arg(long, value_name = "GLOB")]
    pub include: Vec<String>,
    /// Skip files matching this glob (repeatable; gitignore syntax).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// KV-state cache budget in GB; least-recently-used states beyond it are
    /// evicted after each index update [default: 20].
    #[arg(long, env = "APE_CHAT_CACHE_BUDGET_GB", value_name = "GB")]
    pub cache_budget_gb: Option<f64>,
}

impl FolderArgs {
    /// Fills what flags and env left unset from the config file.
    pub fn apply(&mut self, c: &FileConfig) {
        self.chunk_tokens = self.chunk_tokens.or(c.chunk_tokens);
        self.prefix.apply(c);
        self.embed_model = self
            .embed_model
            .take()
            .or_else(|| c.embed_model.as_deref().map(expand_home));
        self.ort_lib = self
            .ort_lib
            .take()
            .or_else(|| c.ort_lib.as_deref().map(expand_home));
        self.cache_budget_gb = self.cache_budget_gb.or(c.cache_budget_gb);
    }

    /// Chunk size in model tokens.
    pub fn chunk_tokens(&self) -> usize {
        self.chunk_tokens.unwrap_or(256)
    }

    /// The budget in bytes.
    pub fn budget_bytes(&self) -> u64 {
        budget_bytes(self.cache_budget_gb)
    }
}

/// What the shared prefix is made of: every chunk state is encoded after
/// it, so changing either re-encodes the cache.
#[derive(Debug, Clone, Args)]
pub struct PrefixArgs {
    /// System prompt; part of the prefix every chunk state is encoded after.
    #[arg(long, env = "APE_CHAT_SYSTEM_PROMPT", value_name = "TEXT")]
    pub system_prompt: Option<String>,
    /// Newline tokens appended to the prefix before the chunks [default: 0,
    /// or what `ape-chat calibrate` chose for the model].
    #[arg(long, env = "APE_CHAT_PREFIX_NEWLINES", value_name = "N")]
    pub prefix_newlines: Option<usize>,
}

impl PrefixArgs {
    /// Fills what flags and env left unset from the config file.
    pub fn apply(&mut self, c: &FileConfig) {
        self.system_prompt = self
            .system_prompt
            .take()
            .or_else(|| c.system_prompt.clone());
        self.prefix_newlines = self.prefix_newlines.or(c.prefix_newlines);
    }

    /// The system prompt in effect.
    pub fn system_prompt(&self) -> String {
        self.system_prompt
            .clone()
            .unwrap_or_else(|| DEFAULT_SYSTEM_PROMPT.to_string())
    }

    /// The prompt layout, and the prefix state encoded once, for `store`.
    pub fn states<'e>(&self, engine: &'e Engine, store: KvStore) -> anyhow::Result<States<'e>> {
        let layout = PromptLayout::new(engine, &self.system_prompt())?.pad(engine, self.newlines());
        Ok(States::new(engine, layout, store)?)
    }

    /// Newline tokens after the template's prefix.
    pub fn newlines(&self) -> usize {
        self.prefix_newlines.unwrap_or(0)
    }
}

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// The folder to index.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    #[command(flatten)]
    pub(super) folder: FolderArgs,
    /// Index text and vectors only; KV states are encoded when an answer
    /// first needs them.
    #[arg(long)]
    no_states: bool,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
}

/// Everything answering needs, with the index up to date.
pub struct Prepared<'e> {
    pub states: States<'e>,
    pub index: FolderIndex,
    pub embedder: Embedder,
    pub report: UpdateReport,
}

/// Opens the folder's index and updates it, showing progress unless `quiet`.
/// `encode_states: false` leaves KV states to be encoded on first use.
pub fn prepare<'e>(
    engine: &'e Engine,
    args: &FolderArgs,
    dir: &Path,
    quiet: bool,
    encode_states: bool,
) -> anyhow::Result<Prepared<'e>> {
    anyhow::ensure!(
        args.chunk_tokens() >= 16,
        "--chunk-tokens must be at least 16"
    );
    let states = args.prefix.states(engine, KvStore::default_location())?;
    let mut o = EmbedOptions::default();
    if let Some(d) = &args.embed_model {
        o.model_dir = d.clone();
    }
    o.ort_lib = args.ort_lib.clone();
    let mut embedder = Embedder::load(&o)?;
    let mut index = FolderIndex::open(dir, &states, args.chunk_tokens())
        .map_err(|e| anyhow::anyhow!("cannot index {}: {e}", dir.display()))?;
    index.set_encode_states(encode_states);
    index.set_filters(Filters {
        include: args.include.clone(),
        exclude: args.exclude.clone(),
    });
    let report = match update(&mut index, &states, &mut embedder, args, quiet) {
        Ok(r) => r,
        Err(IndexError::Busy) => {
            if !quiet {
                eprintln!("{}", dim("another ape-chat process is updating this folder: using the index as it is"));
            }
            index = FolderIndex::open(dir, &states, args.chunk_tokens())?;
            UpdateReport::default()
        }
        Err(e) => return Err(e.into()),
    };
    Ok(Prepared {
        states,
        index,
        embedder,
        report,
    })
}

/// One incremental update with a progress bar (unless `quiet`), then the
/// cache budget check.
pub fn update(
    index: &mut FolderIndex,
    states: &States<'_>,
    embedder: &mut Embedder,
    args: &FolderArgs,
    quiet: bool,
) -> Result<UpdateReport, IndexError> {
    // A bar on a terminal; plain lines (about every 10 %) when stderr is a
    // pipe or a log, so long work is visible there too.
    let lines = !quiet && !std::io::stderr().is_terminal();
    let bar = if quiet || lines {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(0)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} indexing {wide_bar} {pos}/{len} chunks · ETA {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut last_decile = None;
    let mut report = index.update(states, embedder, &CANCEL, &mut |p| match p {
        IndexProgress::Skipped(s) if !quiet => {
            bar.suspend(|| eprintln!("{}", dim(&format!("skipped {}: {}", s.path, s.reason))))
        }
        IndexProgress::Skipped(_) => {}
        IndexProgress::Chunks { done, total } => {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
            let decile = (done * 10).checked_div(total).unwrap_or(10);
            if lines && last_decile != Some(decile) {
                last_decile = Some(decile);
                eprintln!("indexing: {done}/{total} chunks embedded and encoded");
            }
        }
    })?;
    bar.finish_and_clear();
    report.gc = Some(
        states
            .store
            .gc(&crate::index::referenced_states(), args.budget_bytes()),
    );
    Ok(report)
}

pub fn run(model: &ModelArgs, args: &IndexArgs) -> anyhow::Result<ExitCode> {
    let engine = model.load(2048)?;
    let p = prepare(&engine, &args.folder, &args.dir, args.json, !args.no_states)?;
    let r = &p.report;
    if args.json {
        println!("{}", serde_json::to_string_pretty(r)?);
    } else {
        print_summary(r);
    }
    Ok(if r.cancelled {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    })
}

pub fn print_summary(r: &UpdateReport) {
    let t = &r.timings_ms;
    println!(
        "{} {} files seen: {} indexed, {} unchanged, {} removed, {} skipped",
        bold("index"),
        r.files_seen,
        r.files_indexed,
        r.files_unchanged,
        r.files_removed,
        r.files_skipped.len()
    );
    println!(
        "  {} chunks ({} tokens): +{} −{} · {} states encoded, {} cache hits · {} embedded",
        r.chunks,
        r.tokens,
        r.chunks_added,
        r.chunks_removed,
        r.chunks_encoded,
        r.cache_hits,
        r.chunks_embedded
    );
    println!(
        "  {:.1} MB on disk · {}",
        r.bytes_on_disk as f64 / 1e6,
        dim(&format!(
            "walk {:.0} ms, chunk {:.0} ms, bm25 {:.0} ms, embed {:.0} ms, encode {:.0} ms, commit {:.0} ms, total {:.1} s",
            t.walk, t.extract_chunk, t.bm25, t.embed, t.encode, t.commit, t.total / 1e3
        ))
    );
    for s in &r.files_skipped {
        println!("  {}", dim(&format!("skipped {}: {}", s.path, s.reason)));
    }
    if r.cancelled {
        println!("stopped: run the same command again to resume");
    }
}
