//! `ape-chat serve DIR`: the OpenAI-compatible HTTP API over the folder
//! service, which keeps indexing and watching the folder while it serves.
//! Flags follow llama-server's names where they fit.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Args;

use super::style::dim;
use super::{AskArgs, FolderArgs, ModelArgs, CANCEL};
use crate::compute::Budget;
use crate::server::{FolderStatus, Limits, LogLevel, ServerOptions};
use crate::service::{FolderEvent, Service, ServiceOptions, Until};
use crate::workspace::context_size;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The folder to answer from.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Address to listen on (anything but loopback needs --api-key).
    #[arg(long, default_value = "127.0.0.1", value_name = "ADDR")]
    host: IpAddr,
    /// Port to listen on (0: any free port, printed at start).
    #[arg(long, default_value_t = 8080, value_name = "PORT")]
    port: u16,
    /// Require `Authorization: Bearer KEY` on /v1/ requests.
    #[arg(
        long,
        env = "APE_CHAT_API_KEY",
        value_name = "KEY",
        hide_env_values = true
    )]
    api_key: Option<String>,
    /// Seconds a client may take to send its request body.
    #[arg(long, default_value_t = 600, value_name = "S")]
    timeout: u64,
    /// Questions that may wait for the model; more are refused with 429.
    #[arg(long, default_value_t = 8, value_name = "N")]
    queue: usize,
    /// Allow browsers from ORIGIN (repeatable; `*` for any): CORS is off
    /// unless asked for, and pages from other origins are refused (403).
    #[arg(long, value_name = "ORIGIN")]
    cors: Vec<String>,
    /// Also answer requests that name this server as NAME (repeatable; `*`
    /// for any): besides localhost and the bound address, a Host header
    /// must be listed (DNS rebinding protection).
    #[arg(long = "allowed-host", value_name = "NAME")]
    allowed_hosts: Vec<String>,
    /// Seconds a connection may stay open with no request in progress (a
    /// request header still arriving, or kept alive between requests).
    #[arg(long, default_value_t = 15, value_name = "S")]
    idle_timeout: u64,
    /// Open connections at most: past it the longest-open idle one is
    /// closed, and if every one is busy the new one gets 503.
    #[arg(long, default_value_t = 1024, value_name = "N")]
    max_connections: usize,
    /// Seconds requests in progress may go on after Ctrl-C or SIGTERM
    /// before they are cut and the server exits.
    #[arg(long, default_value_t = 60, value_name = "S")]
    shutdown_timeout: u64,
    /// Most chunks one request may read, its `top_k` (or `"all"`) and
    /// `files` together: more is refused with 400, so one request cannot
    /// hold the model for minutes [default: 256].
    #[arg(long, env = "APE_CHAT_MAX_REQUEST_CHUNKS", value_name = "N")]
    max_request_chunks: Option<usize>,
    /// Serve Prometheus metrics at /metrics (requests, queue, time to first
    /// token, decode speed, states, indexing), as llama-server's --metrics.
    #[arg(long)]
    metrics: bool,
    /// Log each refused request and the request fields that were ignored.
    #[arg(long, short)]
    verbose: bool,
    /// Largest request body in bytes.
    #[arg(long, default_value_t = 1 << 20, value_name = "BYTES")]
    max_body: usize,
    #[command(flatten)]
    pub(super) folder: FolderArgs,
    #[command(flatten)]
    pub(super) answer: AskArgs,
}

/// Chunks a request may read unless configured.
const MAX_REQUEST_CHUNKS: usize = 256;

impl ServeArgs {
    /// Fills what flags and env left unset from the config file.
    pub(super) fn apply(&mut self, c: &crate::config::FileConfig) {
        self.folder.apply(c);
        self.answer.apply(c);
        self.max_request_chunks = self.max_request_chunks.or(c.max_request_chunks);
    }
}

pub fn run(model: &ModelArgs, args: &ServeArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.host.is_loopback() || args.api_key.as_deref().is_some_and(|k| !k.is_empty()),
        "listening on {} lets other machines in: give --api-key (or APE_CHAT_API_KEY)",
        args.host
    );
    anyhow::ensure!(args.queue > 0, "--queue must be at least 1");
    anyhow::ensure!(
        args.max_connections > 0,
        "--max-connections must be at least 1"
    );
    let max_connections = fd_room(args.max_connections);
    let dir = args
        .dir
        .canonicalize()
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.dir.display()))?;
    let mut ask = args.answer.options(false)?;
    let max_chunks = args.max_request_chunks.unwrap_or(MAX_REQUEST_CHUNKS);
    anyhow::ensure!(max_chunks > 0, "--max-request-chunks must be at least 1");
    if let crate::index::TopK::Best(k) = ask.top_k {
        anyhow::ensure!(
            k <= max_chunks,
            "--top-k {k} is over --max-request-chunks {max_chunks}: every question would be refused"
        );
    }
    ask.max_chunks = Some(max_chunks);
    let service = Service::new(
        ServiceOptions {
            ask: ask.clone(),
            with_states: true,
            watch: Some(Duration::from_millis(1500)),
            until: Until::Shutdown,
            preload: true,
            queue: args.queue,
        },
        Budget::default(),
    );
    let handle = service.handle();
    let (tx, events) = mpsc::channel();
    let ctx = context_size(
        ask.top_k,
        args.folder.chunk_tokens(),
        ask.generate.max_tokens,
    );
    let super::Started { thread, shared } =
        super::start_service(model, ctx, &dir, &args.folder, service, tx)?;
    let folder = Arc::new(Mutex::new(FolderStatus::default()));
    let status = Arc::clone(&folder);
    std::thread::spawn(move || log_events(events, status));

    let options = ServerOptions {
        addr: SocketAddr::new(args.host, args.port),
        api_key: args.api_key.clone().filter(|k| !k.is_empty()),
        model: model
            .path()
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "ape-chat".into()),
        timeout: Duration::from_secs(args.timeout.max(1)),
        max_body: args.max_body,
        cors: args.cors.clone(),
        allowed_hosts: args.allowed_hosts.clone(),
        limits: Limits {
            idle: Duration::from_secs(args.idle_timeout.max(1)),
            max_connections,
            drain: Duration::from_secs(args.shutdown_timeout),
        },
        ask,
        log: server_log(args.verbose),
        shared,
        metrics: args.metrics,
        queue: args.queue,
    };
    // A few threads for HTTP: the model's computation has the cores.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let served = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(options.addr).await?;
        let addr = listener.local_addr()?;
        println!("listening on http://{addr}/v1 ({})", dir.display());
        eprintln!(
            "{}",
            dim("Ctrl-C or SIGTERM stops after the requests in flight")
        );
        crate::server::serve(options, handle.clone(), folder, listener, stopped()).await
    });
    // Drained: the service answers nothing more and ends after its unit
    // in flight, leaving the index and the cache consistent. A unit that
    // does not end in time (a long state encoding on a slow machine) is
    // left to the process's exit: every stage writes atomically.
    handle.shutdown();
    let deadline = std::time::Instant::now() + Duration::from_secs(args.shutdown_timeout.max(5));
    while !thread.is_finished() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    if thread.is_finished() {
        let _ = thread.join();
    } else {
        eprintln!(
            "{}",
            dim("the folder service's unit in flight did not end in time: exiting without it")
        );
    }
    served?;
    eprintln!("{}", dim("stopped"));
    Ok(ExitCode::SUCCESS)
}

/// File descriptors kept for the index, the cache and the model.
const FD_RESERVE: u64 = 256;

/// Connections this process can open: the open-files limit raised as far
/// as it goes, less what the rest of ape-chat needs.
fn fd_room(wanted: usize) -> usize {
    let Some(soft) = crate::rlimit::raise_open_files() else {
        return wanted;
    };
    let room = soft.saturating_sub(FD_RESERVE).max(16);
    let cap = wanted.min(usize::try_from(room).unwrap_or(usize::MAX));
    if cap < wanted {
        eprintln!(
            "{}",
            dim(&format!(
                "--max-connections {wanted} lowered to {cap}: the process may open {soft} files"
            ))
        );
    }
    cap
}

/// The server's own log lines on stderr; debug lines with --verbose.
fn server_log(verbose: bool) -> crate::server::Log {
    Arc::new(move |level, line| {
        if level > LogLevel::Debug || verbose {
            eprintln!("{}", dim(line));
        }
    })
}

/// Resolves on SIGTERM or Ctrl-C.
async fn stopped() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    // Ctrl-C is the CLI's handler's: it sets CANCEL.
    let interrupt = async {
        while !CANCEL.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    tokio::select! {
        () = term => {}
        () = interrupt => {}
    }
}

/// The folder's events: its status for /health, and a log on stderr.
fn log_events(events: Receiver<FolderEvent>, status: Arc<Mutex<FolderStatus>>) {
    // Each indexing stage as it starts and about every 10 %, with its ETA.
    let mut stages = super::output::IndexBar::lines();
    for e in events {
        let line = match e {
            FolderEvent::Loaded { ms } => format!("model loaded in {:.1} s", ms / 1e3),
            FolderEvent::TextReady {
                report,
                files,
                chunks,
            } => {
                if let Ok(mut s) = status.lock() {
                    (s.ready, s.files, s.chunks) = (true, files, chunks);
                }
                format!(
                    "answers ready: {files} files, {chunks} chunks ({} read, {} removed)",
                    report.files_indexed, report.files_removed
                )
            }
            FolderEvent::Indexed { report, .. } => {
                if let Ok(mut s) = status.lock() {
                    (s.stage, s.cache_bytes) = (None, report.bytes_on_disk);
                }
                format!(
                    "indexed: {} chunks embedded, {} states cached, {} to do",
                    report.chunks_embedded, report.chunks_encoded, report.states_deferred
                )
            }
            FolderEvent::Progress(p) => {
                if let Ok(mut s) = status.lock() {
                    s.progress(&p);
                }
                stages.show(p);
                continue;
            }
            FolderEvent::Preloaded(r) => {
                if let Ok(mut s) = status.lock() {
                    s.preloaded = Some(r);
                }
                super::output::preloaded_line(&r)
            }
            FolderEvent::Note(n) => n,
            FolderEvent::Error { message, fatal } => {
                if fatal {
                    if let Ok(mut s) = status.lock() {
                        s.error = Some(message.clone());
                    }
                }
                format!("error: {message}")
            }
        };
        eprintln!("{}", dim(&line));
    }
}
