//! Every flag group commands share, and how each is layered over the config
//! file: flags and environment variables (clap) first, then the file, then
//! built-in defaults. Commands flatten these groups and turn them into
//! library options here, in one place.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::answer::{AskOptions, Quality};
use crate::config::{ApeSettings, FileConfig};
use crate::engine::prompt::DEFAULT_SYSTEM_PROMPT;
use crate::engine::{
    Engine, EngineOptions, GenerateOptions, KvType, Mode, Preload, PromptLayout, Sampling,
};
use crate::index::dense::EmbedOptions;
use crate::index::{Retrieval, TopK};
use crate::ingest::{Extraction, Filters};
use crate::kvstore::KvStore;
use crate::states::States;
use crate::workspace::FolderOptions;

/// How to load the model; shared by every command that runs one.
#[derive(Debug, Clone, Args)]
pub struct ModelArgs {
    /// GGUF model file [default: the model installed by scripts/setup.sh].
    #[arg(long, global = true, env = "APE_CHAT_MODEL", value_name = "PATH")]
    model: Option<PathBuf>,
    /// CPU threads for llama.cpp [default: all cores].
    #[arg(long, global = true, env = "APE_CHAT_THREADS", value_name = "N")]
    threads: Option<usize>,
    /// K cache type (part of every cached state's identity).
    #[arg(long, global = true, default_value = "f16", value_name = "f16|q8_0")]
    kv_type: KvType,
    /// Layers to offload to the GPU (CUDA builds).
    #[arg(long, global = true, env = "APE_CHAT_GPU_LAYERS", value_name = "N")]
    gpu_layers: Option<u32>,
    /// Memory in GB an answer's context may take (KV cells and attention
    /// scratch) [default: what is free when the answer starts].
    #[arg(
        long,
        global = true,
        env = "APE_CHAT_MEMORY_BUDGET_GB",
        value_name = "GB"
    )]
    memory_budget_gb: Option<f64>,
    /// Load the folder's cached chunk states into memory once it is
    /// indexed (TUI and server), so that first questions read nothing from
    /// disk; only free room is used [default: auto, i.e. when the KV cache
    /// is on a GPU].
    #[arg(
        long,
        global = true,
        env = "APE_CHAT_PRELOAD",
        value_name = "auto|on|off"
    )]
    preload: Option<Preload>,
}

impl ModelArgs {
    /// Fills what flags and env left unset from the config file.
    pub(super) fn apply(&mut self, c: &FileConfig) {
        self.model = self
            .model
            .take()
            .or_else(|| c.model.as_deref().map(expand_home));
        self.threads = self.threads.or(c.threads);
        self.gpu_layers = self.gpu_layers.or(c.gpu_layers);
        self.memory_budget_gb = self.memory_budget_gb.or(c.memory_budget_gb);
        self.preload = self.preload.or(c.preload);
    }

    pub(crate) fn path(&self) -> PathBuf {
        self.model
            .clone()
            .unwrap_or_else(crate::paths::default_model)
    }

    /// CPU threads asked for (all cores by default).
    pub(crate) fn threads(&self) -> usize {
        self.engine_options(0).threads
    }

    /// The engine options these flags ask for, with `ctx_tokens` cells.
    pub(super) fn engine_options(&self, ctx_tokens: u32) -> EngineOptions {
        let mut o = EngineOptions {
            ctx_tokens,
            kv_type: self.kv_type,
            ..EngineOptions::default()
        };
        if let Some(t) = self.threads {
            o.threads = t.max(1);
        }
        if let Some(g) = self.gpu_layers {
            o.gpu_layers = g;
        }
        o.memory_bytes = self.memory_budget_gb.map(|gb| (gb.max(0.0) * 1e9) as u64);
        o.tiers.preload = self.preload.unwrap_or_default();
        o
    }

    /// Loads the model with a context of at least `ctx_tokens` cells.
    pub(super) fn load(&self, ctx_tokens: u32) -> anyhow::Result<Engine> {
        let o = self.engine_options(ctx_tokens);
        let path = self.path();
        if !path.exists() && self.model.is_none() {
            anyhow::bail!(
                "default model {} is not installed: run scripts/setup.sh (or pass --model)",
                path.display()
            );
        }
        Ok(Engine::load(&path, o)?)
    }
}

/// Where each setting of a command came from, for runs that must say so
/// (`eval`): a flag, the environment, the config file (the model's own
/// table or the top level), the settings shipped for the model, or the
/// built-in default.
pub struct Origins<'a> {
    pub(super) matches: Option<&'a clap::ArgMatches>,
    pub(super) config: &'a FileConfig,
    pub(super) model: Option<String>,
}

impl Origins<'_> {
    /// The origin of the setting whose flag id (field name) is `id`.
    pub fn of(&self, id: &str) -> String {
        use clap::parser::ValueSource;
        match self.matches.and_then(|m| m.value_source(id)) {
            Some(ValueSource::CommandLine) => return "flag".into(),
            Some(ValueSource::EnvVariable) => return "environment".into(),
            _ => {}
        }
        let c = self.config;
        let own = self.model.as_deref().and_then(|id| c.models.get(id));
        let top = crate::config::ModelConfig {
            ape: c.ape,
            prefix_newlines: c.prefix_newlines,
        };
        let set = |m: &crate::config::ModelConfig| m.has(id);
        if own.is_some_and(set) {
            "config, this model's table".into()
        } else if set(&top) || (id == "system_prompt" && c.system_prompt.is_some()) {
            "config".into()
        } else if self
            .model
            .as_deref()
            .and_then(crate::config::shipped)
            .is_some_and(|m| set(&m))
        {
            "shipped for this model".into()
        } else {
            "default".into()
        }
    }
}

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
    /// Read every text file, not only documents: by default a web site's
    /// own scripts and style sheets, SVG images, search indexes, source
    /// maps, lock files and print copies of a site's pages are passed over
    /// (`index --dry-run` lists them; an --include glob reads what it
    /// matches).
    #[arg(long)]
    pub all_files: bool,
    /// KV-state cache budget in GB; least-recently-used states beyond it are
    /// evicted after each index update [default: 20].
    #[arg(long, env = "APE_CHAT_CACHE_BUDGET_GB", value_name = "GB")]
    pub cache_budget_gb: Option<f64>,
    /// Memory, in GB, one PDF, Office or EPUB file may take to be read (in
    /// a worker process; past it the file is skipped, with the reason).
    #[arg(
        long,
        env = "APE_CHAT_EXTRACT_MEMORY_GB",
        default_value_t = 4.0,
        value_name = "GB"
    )]
    pub extract_memory_gb: f64,
    /// A shared store of chunk states behind the local cache
    /// (`redis://[user:pass@]host:port/db`, `rediss://` for TLS): states
    /// missing here are read from it, states encoded here are offered to it.
    #[arg(
        long,
        env = "APE_CHAT_STATE_STORE",
        value_name = "URL",
        hide_env_values = true
    )]
    pub state_store: Option<String>,
    /// Seconds one PDF, Office or EPUB file may take to be read.
    #[arg(
        long,
        env = "APE_CHAT_EXTRACT_TIMEOUT",
        default_value_t = 120.0,
        value_name = "S"
    )]
    pub extract_timeout: f64,
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
        self.state_store = self.state_store.take().or_else(|| c.state_store.clone());
        if self.include.is_empty() {
            self.include = c.include.clone();
        }
        if self.exclude.is_empty() {
            self.exclude = c.exclude.clone();
        }
    }

    /// Chunk size in model tokens.
    pub fn chunk_tokens(&self) -> usize {
        self.chunk_tokens.unwrap_or(256)
    }

    /// The local cache of chunk states, with the shared store behind it
    /// when one is configured (a malformed URL is an error naming it,
    /// without its password).
    pub fn store(&self) -> anyhow::Result<KvStore> {
        let shared = match self.state_store.as_deref().filter(|u| !u.is_empty()) {
            Some(url) => Some(crate::statestore::SharedStore::open(url)?),
            None => None,
        };
        Ok(KvStore::default_location().with_shared(shared))
    }

    /// The budget in bytes.
    pub fn budget_bytes(&self) -> u64 {
        budget_bytes(self.cache_budget_gb)
    }

    /// The library's folder options.
    pub fn options(&self) -> FolderOptions {
        let mut embed = EmbedOptions::default();
        if let Some(d) = &self.embed_model {
            embed.model_dir = d.clone();
        }
        embed.ort_lib = self.ort_lib.clone();
        FolderOptions {
            chunk_tokens: self.chunk_tokens(),
            system_prompt: self.prefix.system_prompt(),
            prefix_newlines: self.prefix.newlines(),
            embed,
            filters: Filters {
                include: self.include.clone(),
                exclude: self.exclude.clone(),
                all_files: self.all_files,
            },
            budget_bytes: self.budget_bytes(),
            extraction: Extraction::worker_with(
                (self.extract_memory_gb.max(0.0) * 1e9) as u64,
                std::time::Duration::from_secs_f64(self.extract_timeout.max(0.0)),
            ),
        }
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum QualityArg {
    Fast,
    Balanced,
    Exact,
}

impl From<QualityArg> for Quality {
    fn from(q: QualityArg) -> Self {
        match q {
            QualityArg::Fast => Quality::Fast,
            QualityArg::Balanced => Quality::Balanced,
            QualityArg::Exact => Quality::Exact,
        }
    }
}

impl AskArgs {
    /// Retrieval, mode and decoding settings for answering.
    pub fn options(&self, attribution: bool) -> anyhow::Result<AskOptions> {
        let top_k = self.top_k.unwrap_or_default();
        let (mode, whole_mode) = match &self.mode {
            Some(name) => (
                Mode::parse(name, self.ape.params()?).map_err(anyhow::Error::msg)?,
                None,
            ),
            None => self.quality().modes(self.ape, self.balanced)?,
        };
        let sampling = if self.temperature > 0.0 {
            Sampling::Sample {
                temperature: self.temperature,
                top_p: 0.95,
                seed: self.seed,
            }
        } else {
            Sampling::Greedy
        };
        Ok(AskOptions {
            top_k,
            files: self.files.clone(),
            retrieval: self.retrieval.into(),
            mode,
            whole_mode,
            generate: GenerateOptions {
                max_tokens: self.max_tokens,
                sampling,
                attribution,
                // The prompt layout's own, set by the answer.
                stops: &[],
                stop: self.stop.clone(),
                top_logprobs: 0,
                score: Vec::new(),
            },
            max_chunks: None,
        })
    }

    /// How a named setting answers: a quality (`fast`, `balanced`, `exact`,
    /// resolved as `--quality` is, with these flags and the model's
    /// settings) or a mode spec (`ape:t=…:reread=…`, over these flags' APE
    /// values).
    pub fn setting(&self, name: &str) -> anyhow::Result<(Mode, Option<Mode>)> {
        match <QualityArg as ValueEnum>::from_str(name, false) {
            Ok(q) => Ok(Quality::from(q).modes(self.ape, self.balanced)?),
            Err(_) => Ok((
                Mode::parse(name, self.ape.params()?).map_err(anyhow::Error::msg)?,
                None,
            )),
        }
    }

    /// The quality setting in effect.
    pub fn quality(&self) -> Quality {
        self.quality.map(Quality::from).unwrap_or_default()
    }

    /// What the status line calls the setting: the quality, or the mode
    /// when one was named.
    pub fn setting_label(&self) -> String {
        match &self.mode {
            Some(m) => m.clone(),
            None => self.quality().name().to_string(),
        }
    }

    /// Fills what flags and env left unset from the config file.
    pub fn apply(&mut self, c: &FileConfig) {
        self.top_k = self.top_k.or(c.top_k);
        if self.quality.is_none() {
            self.quality = c.quality.map(|q| match q {
                Quality::Fast => QualityArg::Fast,
                Quality::Balanced => QualityArg::Balanced,
                Quality::Exact => QualityArg::Exact,
            });
        }
        (self.ape, self.balanced) = c.ape_layers(self.ape);
    }
}

#[derive(Debug, Clone, Args)]
pub struct AskArgs {
    /// Speed against faithfulness to sequential prefill: `fast` (APE),
    /// `balanced` (APE, and the best chunk echoed from its cached states
    /// right before the question; re-read by prefill with --file, and on a
    /// GPU while that takes under 50 ms), `exact` (sequential prefill)
    /// [default: balanced].
    #[arg(long, env = "APE_CHAT_QUALITY", value_enum)]
    quality: Option<QualityArg>,
    /// How retrieved chunks reach the model, overriding --quality.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(Mode::NAMES))]
    mode: Option<String>,
    #[command(flatten)]
    ape: ApeSettings,
    /// What `balanced` sets above its preset (the flags over the file's
    /// and the model's shipped `balanced` settings; `FileConfig::balanced`).
    #[arg(skip)]
    balanced: ApeSettings,
    /// Chunks read per question: the K best, or `all` (under fast and
    /// balanced every chunk shares the same positions, so K may reach past
    /// the model's window; memory is the limit) [default: 5].
    #[arg(long, env = "APE_CHAT_TOP_K", value_name = "K|all")]
    top_k: Option<TopK>,
    /// Also read this file whole, every chunk in document order (a path
    /// relative to the folder; repeatable).
    #[arg(long = "file", value_name = "PATH")]
    files: Vec<String>,
    /// How chunks are ranked: BM25 and vectors fused, or either alone.
    #[arg(long, value_enum, default_value = "hybrid")]
    retrieval: RetrievalArg,
    /// Longest answer, in tokens.
    #[arg(long, default_value_t = 256, value_name = "N")]
    pub(super) max_tokens: usize,
    /// Sampling temperature; 0 picks the most likely token (deterministic).
    #[arg(long, default_value_t = 0.0, value_name = "X")]
    temperature: f32,
    /// Seed for sampling.
    #[arg(long, default_value_t = 42)]
    seed: u32,
    /// End the answer before this text (repeatable), wherever it appears,
    /// however the tokens split it: as a request's `stop`.
    #[arg(long = "stop", value_name = "TEXT", value_parser = nonempty)]
    stop: Vec<String>,
}

fn nonempty(s: &str) -> Result<String, String> {
    if s.is_empty() {
        Err("a stop text must not be empty".into())
    } else {
        Ok(s.to_string())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum RetrievalArg {
    Hybrid,
    Bm25,
    Dense,
}

impl From<RetrievalArg> for Retrieval {
    fn from(r: RetrievalArg) -> Self {
        match r {
            RetrievalArg::Hybrid => Retrieval::Hybrid,
            RetrievalArg::Bm25 => Retrieval::Bm25,
            RetrievalArg::Dense => Retrieval::Dense,
        }
    }
}

/// `~/x` → `$HOME/x` (config files are written by people).
pub(crate) fn expand_home(p: &std::path::Path) -> PathBuf {
    match (p.strip_prefix("~"), directories::BaseDirs::new()) {
        (Ok(rest), Some(b)) => b.home_dir().join(rest),
        _ => p.to_path_buf(),
    }
}

/// A budget in GB (default 20) as bytes.
pub(crate) fn budget_bytes(gb: Option<f64>) -> u64 {
    (gb.unwrap_or(20.0).max(0.0) * 1e9) as u64
}
