//! Command-line interface: flag definitions (clap derive, defined once) and
//! dispatch to one small module per command. No engine logic lives here.

mod ask;
mod bench;
mod cache;
mod calibrate;
mod chat;
mod doctor;
mod eval;
mod generate;
mod index;
mod style;
mod watch;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::{Args, Parser, Subcommand};

use crate::config::FileConfig;
use crate::engine::{ApeParams, Engine, EngineOptions, KvType};

/// Chat with a local folder: retrieval plus cached per-chunk KV states,
/// answered with Adaptive Parallel Encoding on llama.cpp.
#[derive(Debug, Parser)]
#[command(name = "ape-chat", version, args_conflicts_with_subcommands = true)]
#[command(
    after_help = "Files: models, indexes and KV states live in ~/.cache/ape-chat \
(APE_CHAT_CACHE_DIR). Set up models with scripts/setup.sh."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Ask one question about DIR, stream the answer, print the sources.
    /// `-` reads the question from stdin.
    #[arg(long, value_name = "QUESTION")]
    ask: Option<String>,
    /// The folder to answer from.
    #[arg(value_name = "DIR")]
    dir: Option<PathBuf>,
    #[command(flatten)]
    answer: ask::AskArgs,
    #[command(flatten)]
    folder: index::FolderArgs,
    #[command(flatten)]
    model: ModelArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check a GGUF model: architecture, APE support, and the engine's
    /// exactness and APE-attention checks run on it.
    Doctor(doctor::DoctorArgs),
    /// Index a folder: chunks, BM25, vectors and every chunk's KV state,
    /// incrementally (unchanged files cost nothing).
    Index(index::IndexArgs),
    /// Print shell completions (bash, zsh, fish, elvish, powershell).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff).
    Man,
    /// Answer a dataset in several modes and score it (EM, F1, contains, speed).
    Eval(eval::EvalArgs),
    /// Find the prefix variant, T and S that suit the model, and save them
    /// for it (used from then on by --ask, the TUI and eval).
    Calibrate(calibrate::CalibrateArgs),
    /// Turn SQuAD v2 into an eval dataset (gold paragraph + distractors).
    ConvertSquad(eval::ConvertArgs),
    /// Keep a folder's index and KV states current as files change.
    Watch(watch::WatchArgs),
    /// Inspect or trim the KV-state cache.
    #[command(subcommand)]
    Cache(cache::CacheCommand),
    /// Measure speed side by side in one run.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
}

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
}

impl ModelArgs {
    /// Fills what flags and env left unset from the config file.
    fn apply(&mut self, c: &FileConfig) {
        self.model = self
            .model
            .take()
            .or_else(|| c.model.as_deref().map(expand_home));
        self.threads = self.threads.or(c.threads);
        self.gpu_layers = self.gpu_layers.or(c.gpu_layers);
    }

    pub(crate) fn path(&self) -> PathBuf {
        self.model
            .clone()
            .unwrap_or_else(crate::paths::default_model)
    }

    /// Loads the model with a context of at least `ctx_tokens` cells.
    fn load(&self, ctx_tokens: u32) -> anyhow::Result<Engine> {
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

/// APE's settings, shared by commands that use APE.
#[derive(Debug, Clone, Copy, Args)]
pub struct ApeArgs {
    /// APE attention temperature T for chunk tokens [default: 0.9, or what
    /// is calibrated for the model].
    #[arg(
        long = "temperature-ape",
        env = "APE_CHAT_TEMPERATURE_APE",
        value_name = "T"
    )]
    temperature_ape: Option<f32>,
    /// APE scaling factor S of the chunks' attention mass [default: 0.9].
    #[arg(long = "scale-ape", env = "APE_CHAT_SCALE_APE", value_name = "S")]
    scale_ape: Option<f32>,
    /// Re-read the N best chunks sequentially before the question (costs
    /// their prefill) [default: 0, or what is shipped for the model].
    #[arg(long, env = "APE_CHAT_REREAD", value_name = "N")]
    reread: Option<u32>,
    /// Each attention row keeps only its N strongest chunks [default: 0 = all].
    #[arg(long, env = "APE_CHAT_FOCUS", value_name = "N")]
    focus: Option<u32>,
}

impl ApeArgs {
    /// Fills what flags and env left unset from the config file.
    fn apply(&mut self, c: &FileConfig) {
        self.temperature_ape = self.temperature_ape.or(c.temperature_ape);
        self.scale_ape = self.scale_ape.or(c.scale_ape);
        self.reread = self.reread.or(c.reread);
        self.focus = self.focus.or(c.focus);
    }

    /// Whether a re-read count was given (flag, env or config).
    fn reread_set(&self) -> bool {
        self.reread.is_some()
    }

    fn params(&self) -> anyhow::Result<ApeParams> {
        let d = ApeParams::DEFAULT;
        let p = ApeParams {
            temperature: self.temperature_ape.unwrap_or(d.temperature),
            scale: self.scale_ape.unwrap_or(d.scale),
            reread: self.reread.unwrap_or(d.reread),
            focus: self.focus.unwrap_or(d.focus),
        };
        p.validate().map_err(anyhow::Error::msg)?;
        Ok(p)
    }
}

/// Where each setting of a command came from, for runs that must say so
/// (`eval`): a flag, the environment, the config file (the model's own
/// table or the top level), the settings shipped for the model, or the
/// built-in default.
pub struct Origins<'a> {
    matches: Option<&'a clap::ArgMatches>,
    config: &'a FileConfig,
    model: Option<String>,
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
        let set = |m: &crate::config::ModelConfig| match id {
            "temperature_ape" => m.temperature_ape.is_some(),
            "scale_ape" => m.scale_ape.is_some(),
            "prefix_newlines" => m.prefix_newlines.is_some(),
            "reread" => m.reread.is_some(),
            "focus" => m.focus.is_some(),
            _ => false,
        };
        let c = self.config;
        let own = self.model.as_deref().and_then(|id| c.models.get(id));
        let top = crate::config::ModelConfig {
            temperature_ape: c.temperature_ape,
            scale_ape: c.scale_ape,
            prefix_newlines: c.prefix_newlines,
            reread: c.reread,
            focus: c.focus,
        };
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

impl Cli {
    /// Fills every setting that flags and env left unset from the config
    /// file; returns the model's identity.
    fn apply(&mut self, c: &FileConfig) -> Option<String> {
        self.model.apply(c);
        // Settings for this very model (calibrated or shipped) beat the
        // general ones.
        let id = crate::engine::ModelId::of_file(&self.model.path())
            .ok()
            .map(|id| id.to_string());
        let c = &c.for_model(id.as_deref());
        self.answer.apply(c);
        self.folder.apply(c);
        match &mut self.command {
            Some(Command::Index(a)) => a.folder.apply(c),
            Some(Command::Watch(a)) => a.folder.apply(c),
            Some(Command::Bench(b)) => b.apply(c),
            Some(Command::Calibrate(a)) => a.apply(c),
            Some(Command::Eval(a)) => {
                a.ape.apply(c);
                a.prefix.apply(c);
            }
            Some(Command::Cache(cache::CacheCommand::Gc { budget_gb, .. })) => {
                *budget_gb = budget_gb.or(c.cache_budget_gb);
            }
            _ => {}
        }
        id
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

/// Set by Ctrl-C: long work stops cleanly at the next safe point. A second
/// Ctrl-C exits at once.
pub(crate) static CANCEL: AtomicBool = AtomicBool::new(false);

/// Parses arguments and runs the command; the binary's only entry point.
pub fn run() -> anyhow::Result<ExitCode> {
    use clap::{CommandFactory, FromArgMatches};
    let matches = Cli::command().get_matches();
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let config = crate::config::load()?;
    let model_id = cli.apply(&config);
    let _ = ctrlc::set_handler(|| {
        if CANCEL.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    });
    match cli.command {
        Some(Command::Doctor(args)) => doctor::run(&cli.model, &args),
        Some(Command::Index(args)) => index::run(&cli.model, &args),
        Some(Command::Cache(cmd)) => cache::run(&cmd),
        Some(Command::Watch(args)) => watch::run(&cli.model, &args),
        Some(Command::Completions { shell }) => generate::completions(shell),
        Some(Command::Eval(args)) => {
            let origins = Origins {
                matches: matches.subcommand_matches("eval"),
                config: &config,
                model: model_id,
            };
            eval::run(&cli.model, &args, &origins)
        }
        Some(Command::ConvertSquad(args)) => eval::convert(&args),
        Some(Command::Calibrate(args)) => calibrate::run(&cli.model, &args),
        Some(Command::Man) => generate::man(),
        Some(Command::Bench(cmd)) => bench::run(&cli.model, &cmd),
        None => match cli.ask {
            Some(q) => {
                let dir = cli
                    .dir
                    .or_else(|| config.folders.first().map(|d| expand_home(d)));
                ask::run(&cli.model, &cli.answer, &cli.folder, &q, dir)
            }
            None => match cli
                .dir
                .or_else(|| config.folders.first().map(|d| expand_home(d)))
            {
                Some(dir) => chat::run(&cli.model, &cli.answer, &cli.folder, &dir),
                None => {
                    Cli::command().print_help()?;
                    eprintln!("\n\nerror: give a folder (ape-chat DIR) or set `folders` in the config file");
                    Ok(ExitCode::from(2))
                }
            },
        },
    }
}
