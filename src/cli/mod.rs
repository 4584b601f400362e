//! Command-line interface: flag definitions (clap derive, defined once) and
//! dispatch to one small module per command. No engine logic lives here.

mod args;
mod ask;
mod bench;
mod cache;
mod calibrate;
mod chat;
mod convert;
mod doctor;
mod eval;
mod eval_docs;
mod generate;
mod index;
mod output;
mod serve;
mod style;
mod watch;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::{Parser, Subcommand};

pub(crate) use args::{budget_bytes, expand_home};
pub use args::{AskArgs, FolderArgs, ModelArgs, Origins, PrefixArgs};

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
    #[arg(long = "ask", value_name = "QUESTION")]
    question: Option<String>,
    /// The folder to answer from.
    #[arg(value_name = "DIR")]
    dir: Option<PathBuf>,
    #[command(flatten)]
    answer: AskArgs,
    #[command(flatten)]
    ask: ask::AskOutput,
    #[command(flatten)]
    folder: FolderArgs,
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
    /// Answer questions over real documentation folders, indexed as a user
    /// would, in several settings: right or wrong, paired against the
    /// first, timed with states cached.
    EvalDocs(eval_docs::EvalDocsArgs),
    /// Find the prefix variant, T and S that suit the model, and save them
    /// for it (used from then on by --ask, the TUI and eval).
    Calibrate(calibrate::CalibrateArgs),
    /// Turn a dataset into eval records (SQuAD v2: gold paragraph +
    /// distractors from its article).
    #[command(alias = "convert-squad")]
    Convert(convert::ConvertArgs),
    /// Keep a folder's index and KV states current as files change.
    Watch(watch::WatchArgs),
    /// Serve the folder over an OpenAI-compatible HTTP API
    /// (/v1/chat/completions, /v1/models, /health), indexing and watching
    /// it meanwhile.
    Serve(serve::ServeArgs),
    /// Inspect or trim the KV-state cache.
    #[command(subcommand)]
    Cache(cache::CacheCommand),
    /// Measure speed side by side in one run.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
}

impl Cli {
    /// Fills every setting that flags and env left unset from the config
    /// file, the model's own settings first; returns the model's identity.
    fn apply(&mut self, file: &crate::config::FileConfig) -> Option<String> {
        self.model.apply(file);
        let (c, id) = file.for_model_file(&self.model.path());
        let c = &c;
        self.answer.apply(c);
        self.folder.apply(c);
        match &mut self.command {
            Some(Command::Index(a)) => a.folder.apply(c),
            Some(Command::Watch(a)) => a.folder.apply(c),
            Some(Command::Serve(a)) => a.apply(c),
            Some(Command::Doctor(a)) => {
                a.state_store = a.state_store.take().or_else(|| c.state_store.clone());
            }
            Some(Command::Bench(b)) => b.apply(c),
            Some(Command::Calibrate(a)) => a.apply(c),
            Some(Command::Eval(a)) => {
                a.ape = a.ape.over(c.ape);
                a.prefix.apply(c);
            }
            Some(Command::EvalDocs(a)) => a.apply(c),
            Some(Command::Cache(cmd)) => cmd.apply(c),
            _ => {}
        }
        id
    }
}

/// Starts `service` over `dir` on its own thread, with the model these
/// flags name (loaded there, with `ctx` cells) and the folder settings.
fn start_service(
    model: &ModelArgs,
    ctx: u32,
    dir: &std::path::Path,
    folder: &FolderArgs,
    service: crate::service::Service,
    events: std::sync::mpsc::Sender<crate::service::FolderEvent>,
) -> anyhow::Result<Started> {
    let model = model.clone();
    let store = folder.store()?;
    let shared = store.shared().cloned();
    let spec = crate::service::FolderSpec {
        folder: dir.to_path_buf(),
        options: folder.options(),
        store,
        index_dir: None,
    };
    let thread = service.spawn(move || model.load(ctx), spec, events)?;
    Ok(Started { thread, shared })
}

/// A folder service running on its thread, and the shared state store it
/// reads through (for `serve`'s `/health`).
struct Started {
    thread: std::thread::JoinHandle<()>,
    shared: Option<crate::statestore::SharedStore>,
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
    // A best effort: a read-only or foreign-owned cache still works.
    let own = std::env::var_os("APE_CHAT_CONFIG").is_none();
    let _ = crate::paths::make_private(&crate::config::path(), own);
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
        Some(Command::Serve(args)) => serve::run(&cli.model, &args),
        Some(Command::Completions { shell }) => generate::completions(shell),
        Some(Command::Eval(args)) => {
            let origins = Origins {
                matches: matches.subcommand_matches("eval"),
                config: &config,
                model: model_id,
            };
            eval::run(&cli.model, &args, &origins)
        }
        Some(Command::EvalDocs(args)) => eval_docs::run(&cli.model, &args),
        Some(Command::Convert(args)) => convert::run(&args),
        Some(Command::Calibrate(args)) => calibrate::run(&cli.model, &args),
        Some(Command::Man) => generate::man(),
        Some(Command::Bench(cmd)) => bench::run(&cli.model, &cmd),
        None => match cli.question {
            Some(q) => {
                let dir = cli
                    .dir
                    .or_else(|| config.folders.first().map(|d| expand_home(d)));
                ask::run(&cli.model, &cli.answer, &cli.ask, &cli.folder, &q, dir)
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
