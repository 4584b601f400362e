//! `ape-chat serve`: an OpenAI-compatible HTTP API over the folder service
//! (axum on tokio). `POST /v1/chat/completions` (streamed as server-sent
//! events, or not): the last user message is the question, the messages
//! before it the conversation; sources come back in a `sources` field (and,
//! streamed, in a last chunk before `[DONE]`), the timing in `usage`.
//! `GET /v1/models`, `GET /health`, and `GET /metrics` with `--metrics`
//! (`metrics.rs`). `stop`, `logprobs` and `top_logprobs` work as OpenAI
//! defines them; a streamed request's headers go out with its first token,
//! so a question refused before it (past the model's window, over the
//! memory budget, an unknown file) gets its real status.
//!
//! Made to be left running beside a person's documents: requests from a
//! web page or a rebinding DNS name are refused before any work
//! (`guard.rs`), every connection is bounded in time and number
//! (`listen.rs`), requests are read as real clients write them
//! (`request.rs`). The model computes one thing at a time: requests queue
//! in the service (questions before background indexing), and past its
//! bound are refused at once with 429 and `Retry-After`. A client that
//! goes away, even while its question still waits, stops its answer.
//! Errors are OpenAI error objects: 4xx for what the client asked, 5xx
//! only for the server's own faults.

pub(crate) mod guard;
mod listen;
mod metrics;
pub(crate) mod request;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::answer::AskOptions;
use crate::engine::{StopReason, TokenLogprob};
use crate::index::{IndexProgress, Stage};
use crate::ingest::Place;
use crate::service::{AnswerEvent, Answered, AskRefused, Failure, Handle};

use guard::Guard;
pub use listen::Limits;
use metrics::{AnswerFigures, Gauges, Metrics, Outcome};

/// How loud a server log line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// What a person debugging a client wants (fields ignored, …).
    Debug,
    Info,
    /// Something refused or cut that the operator should know of.
    Warn,
}

/// Where the server's own log lines go (the command prints them).
pub type Log = Arc<dyn Fn(LogLevel, &str) + Send + Sync>;

/// How the server runs.
#[derive(Clone)]
pub struct ServerOptions {
    pub addr: SocketAddr,
    /// Required as `Authorization: Bearer KEY` on `/v1/` when set.
    pub api_key: Option<String>,
    /// The model's name in responses and `/v1/models`.
    pub model: String,
    /// Reading a request body may take this long (a slow client gets 408).
    pub timeout: Duration,
    /// Largest request body (413 past it).
    pub max_body: usize,
    /// Origins allowed by CORS (none: CORS off, and browsers from other
    /// origins refused).
    pub cors: Vec<String>,
    /// Host names besides localhost and the bound address that requests
    /// may name (`--allowed-host`).
    pub allowed_hosts: Vec<String>,
    /// Connections: idle timeout, cap, drain on shutdown.
    pub limits: Limits,
    /// Answer settings a request may override (tokens, sampling).
    pub ask: AskOptions,
    pub log: Log,
    /// The shared state store the folder reads through, for `/health`.
    pub shared: Option<crate::statestore::SharedStore>,
    /// Serve `/metrics` (`--metrics`).
    pub metrics: bool,
    /// Questions that may wait for the model (`--queue`), for `/metrics`.
    pub queue: usize,
}

/// The folder's state, as `/health` reports it.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct FolderStatus {
    /// The text stage committed at least once: questions are answered.
    pub ready: bool,
    pub files: usize,
    pub chunks: usize,
    /// What preloading put in memory, once it ended (`--preload`).
    pub preloaded: Option<crate::workspace::PreloadReport>,
    /// A fatal error (the model did not load, the folder cannot be read).
    pub error: Option<String>,
    /// The indexing stage in progress: units done, units in all.
    #[serde(skip)]
    pub stage: Option<(Stage, usize, usize)>,
    /// Chunk-state files on disk after the last indexing pass.
    #[serde(skip)]
    pub cache_bytes: u64,
}

impl FolderStatus {
    /// Follows the folder service's progress (for `/metrics`).
    pub fn progress(&mut self, p: &IndexProgress) {
        if let IndexProgress::Stage { stage, done, total } = *p {
            self.stage = (done < total).then_some((stage, done, total));
        }
    }
}

struct App {
    options: ServerOptions,
    handle: Handle,
    folder: Arc<Mutex<FolderStatus>>,
    /// Answers the service took up.
    started: AtomicU64,
    answered: AtomicU64,
    cancelled: AtomicU64,
    /// Clients that left before their question was taken up: it cost no
    /// retrieval and no prefill.
    abandoned: AtomicU64,
    refused: AtomicU64,
    in_flight: AtomicUsize,
    metrics: Metrics,
}

/// An OpenAI-style error response.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    kind: &'static str,
    code: Option<&'static str>,
    param: Option<String>,
    message: String,
    retry_after: Option<u64>,
}

impl ApiError {
    fn new(status: StatusCode, kind: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            kind,
            code: None,
            param: None,
            message: message.into(),
            retry_after: None,
        }
    }

    fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request_error", message)
    }

    fn invalid_param(param: &str, message: impl Into<String>) -> Self {
        Self {
            param: Some(param.to_string()),
            ..Self::invalid(message)
        }
    }

    /// A question the service could not answer: the client's doing (400,
    /// with the engine's words: how many positions, the window, the
    /// budget, the file) or the server's (500).
    fn failed(f: Failure) -> Self {
        if f.by_request() {
            Self {
                code: f.code,
                ..Self::invalid(f.message)
            }
        } else {
            Self::new(StatusCode::INTERNAL_SERVER_ERROR, "server_error", f.message)
        }
    }

    fn unsupported(param: &str, message: impl Into<String>) -> Self {
        Self {
            param: Some(param.to_string()),
            code: Some("unsupported_parameter"),
            ..Self::invalid(message)
        }
    }

    fn unavailable(message: impl Into<String>) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, "server_error", message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {
            "message": self.message, "type": self.kind,
            "param": self.param, "code": self.code,
        }});
        let mut r = (self.status, Json(body)).into_response();
        if let Some(s) = self.retry_after {
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        r
    }
}

/// Serves until `shutdown` resolves, then drains the requests in flight
/// (at most `limits.drain`).
pub async fn serve(
    options: ServerOptions,
    handle: Handle,
    folder: Arc<Mutex<FolderStatus>>,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let bound = listener.local_addr()?;
    let guard = Arc::new(Guard::new(bound, &options.allowed_hosts, &options.cors));
    let cors = cors_layer(&options.cors);
    let (limits, log) = (options.limits, Arc::clone(&options.log));
    let app = Arc::new(App {
        options,
        handle,
        folder,
        started: AtomicU64::new(0),
        answered: AtomicU64::new(0),
        cancelled: AtomicU64::new(0),
        abandoned: AtomicU64::new(0),
        refused: AtomicU64::new(0),
        in_flight: AtomicUsize::new(0),
        metrics: Metrics::default(),
    });
    let counted = Arc::clone(&app);
    let mut router = Router::new()
        .route("/v1/chat/completions", post(chat))
        .route("/v1/models", get(models))
        .route("/health", get(health))
        .route("/v1/health", get(health))
        .route("/metrics", get(metrics_text))
        .fallback(|| async {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "invalid_request_error",
                "no such endpoint",
            )
        })
        .with_state(app);
    if let Some(cors) = cors {
        router = router.layer(cors);
    }
    // Outermost: nothing runs for a request from the wrong place.
    let log_refused = Arc::clone(&log);
    let router = router.layer(axum::middleware::from_fn(
        move |req: Request, next: Next| {
            let (guard, log) = (Arc::clone(&guard), Arc::clone(&log_refused));
            async move {
                match guard.check(req.method(), req.headers()) {
                    Ok(()) => next.run(req).await,
                    Err(e) => {
                        log(
                            LogLevel::Warn,
                            &format!("refused {} {}: {}", req.method(), req.uri(), e.message),
                        );
                        e.into_response()
                    }
                }
            }
        },
    ));
    // Around everything: every response is counted by its status.
    let router = router.layer(axum::middleware::from_fn(
        move |req: Request, next: Next| {
            let app = Arc::clone(&counted);
            async move {
                let path = req.uri().path().to_string();
                let response = next.run(req).await;
                app.metrics.request(&path, response.status().as_u16());
                response
            }
        },
    ));
    listen::run(listener, router, limits, log, shutdown).await;
    Ok(())
}

fn cors_layer(origins: &[String]) -> Option<tower_http::cors::CorsLayer> {
    use tower_http::cors::{AllowHeaders, AllowOrigin, CorsLayer};
    if origins.is_empty() {
        return None;
    }
    let allow = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(
            origins
                .iter()
                .filter_map(|o| HeaderValue::from_str(o.trim_end_matches('/')).ok())
                .collect::<Vec<_>>(),
        )
    };
    // The headers a preflight asks for are mirrored: `*` would not cover
    // `Authorization`, and OpenAI's browser SDK adds its own.
    Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([axum::http::Method::GET, axum::http::Method::POST])
            .allow_headers(AllowHeaders::mirror_request())
            .max_age(Duration::from_secs(600)),
    )
}

fn authorize(app: &App, headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(key) = &app.options.api_key else {
        return Ok(());
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    // Compared in constant time: the key is a secret.
    let same = given.is_some_and(|g| {
        g.len() == key.len()
            && g.bytes()
                .zip(key.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    });
    if same {
        Ok(())
    } else {
        Err(ApiError {
            code: Some("invalid_api_key"),
            ..ApiError::new(
                StatusCode::UNAUTHORIZED,
                "invalid_request_error",
                "a valid API key is required: Authorization: Bearer KEY",
            )
        })
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

async fn models(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if let Err(e) = authorize(&app, &headers) {
        return e.into_response();
    }
    Json(json!({"object": "list", "data": [{
        "id": app.options.model, "object": "model", "created": now(), "owned_by": "ape-chat",
    }]}))
    .into_response()
}

async fn health(State(app): State<Arc<App>>) -> Response {
    let folder = app.folder.lock().map(|f| f.clone()).unwrap_or_default();
    let status = match (&folder.error, folder.ready) {
        (Some(_), _) => "error",
        (None, true) => "ok",
        (None, false) => "loading",
    };
    let code = if folder.error.is_some() {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    let store = app
        .options
        .shared
        .as_ref()
        .map(|s| json!({"url": s.url(), "stats": s.stats(), "error": s.last_error()}));
    let body = json!({
        "status": status, "folder": folder, "model": app.options.model, "state_store": store,
        "waiting": app.handle.waiting(), "in_flight": app.in_flight.load(Ordering::SeqCst),
        "started": app.started.load(Ordering::SeqCst),
        "answered": app.answered.load(Ordering::SeqCst),
        "cancelled": app.cancelled.load(Ordering::SeqCst),
        "abandoned": app.abandoned.load(Ordering::SeqCst),
        "refused": app.refused.load(Ordering::SeqCst),
    });
    (code, Json(body)).into_response()
}

/// Prometheus' text format, behind `--metrics` and the API key.
async fn metrics_text(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if !app.options.metrics {
        return ApiError::new(
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            "metrics are off: start the server with --metrics",
        )
        .into_response();
    }
    if let Err(e) = authorize(&app, &headers) {
        return e.into_response();
    }
    let folder = app.folder.lock().map(|f| f.clone()).unwrap_or_default();
    let gauges = Gauges {
        in_flight: app.in_flight.load(Ordering::SeqCst),
        waiting: app.handle.waiting(),
        queue: app.options.queue,
        folder: metrics::FolderFigures {
            ready: folder.ready,
            files: folder.files,
            chunks: folder.chunks,
            stage: folder.stage,
            cache_bytes: folder.cache_bytes,
        },
    };
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        app.metrics.render(&gauges),
    )
        .into_response()
}

/// Reads the body within the size limit and the time limit.
async fn read_body(
    limit: usize,
    timeout: Duration,
    headers: &HeaderMap,
    body: Body,
) -> Result<Vec<u8>, ApiError> {
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_request_error",
            format!("the request body is larger than {limit} bytes"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(too_large());
    }
    match tokio::time::timeout(timeout, axum::body::to_bytes(body, limit)).await {
        Err(_) => Err(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "invalid_request_error",
            "the request body did not arrive in time",
        )),
        Ok(Err(e)) => {
            let e = e.into_inner();
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                Err(too_large())
            } else {
                Err(ApiError::invalid(format!("cannot read the body: {e}")))
            }
        }
        Ok(Ok(b)) => Ok(b.to_vec()),
    }
}

/// Counts a request in flight while alive.
struct InFlight(Arc<App>);

impl InFlight {
    fn new(app: &Arc<App>) -> Self {
        app.in_flight.fetch_add(1, Ordering::SeqCst);
        Self(Arc::clone(app))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn chat(State(app): State<Arc<App>>, headers: HeaderMap, body: Body) -> Response {
    match chat_inner(app, headers, body).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

/// Stops a question's answer when dropped: the client went away (while
/// its question waited, or mid-answer) or the server dropped the
/// connection at shutdown. After the answer's end it changes nothing.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

async fn chat_inner(app: Arc<App>, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    authorize(&app, &headers)?;
    let bytes = read_body(app.options.max_body, app.options.timeout, &headers, body).await?;
    let (req, question) = request::parse(&app.options.ask, &bytes).inspect_err(|_| {
        app.metrics.outcome(Outcome::Invalid);
    })?;
    let ignored: Vec<&str> = req.ignored().collect();
    if !ignored.is_empty() {
        (app.options.log)(
            LogLevel::Debug,
            &format!("ignored request fields: {}", ignored.join(", ")),
        );
    }
    let ticket = app.handle.ask(question).map_err(|e| match e {
        AskRefused::Busy(_) => {
            app.refused.fetch_add(1, Ordering::SeqCst);
            app.metrics.outcome(Outcome::Refused);
            ApiError {
                code: Some("rate_limit_exceeded"),
                retry_after: Some(2),
                ..ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "rate_limit_error",
                    format!("{e}: try again shortly"),
                )
            }
        }
        AskRefused::Stopped => ApiError::unavailable("the server is shutting down"),
        AskRefused::Failed(message) => ApiError::unavailable(message),
    })?;
    let stop = StopOnDrop(Arc::clone(&ticket.cancel));
    // The service's events, carried onto the async side, and counted.
    let (tx, mut rx) = mpsc::channel::<AnswerEvent>(64);
    let counts = Arc::clone(&app);
    tokio::task::spawn_blocking(move || {
        let (mut started, mut gone) = (false, false);
        for e in ticket.events {
            match &e {
                AnswerEvent::Started { .. } => {
                    started = true;
                    counts.started.fetch_add(1, Ordering::SeqCst);
                }
                AnswerEvent::Answered(done) => count(&counts, done),
                AnswerEvent::Failed(f) => counts.metrics.outcome(if f.by_request() {
                    Outcome::Invalid
                } else {
                    Outcome::Failed
                }),
                AnswerEvent::Token { .. } => {}
            }
            if !gone && tx.blocking_send(e).is_err() {
                ticket.cancel.store(true, Ordering::SeqCst);
                gone = true;
            }
        }
        if !started {
            // The service dropped it unread: its client had gone.
            counts.abandoned.fetch_add(1, Ordering::SeqCst);
            counts.metrics.outcome(Outcome::Abandoned);
        }
    });
    let id = format!("chatcmpl-{:016x}", rand_id());
    // The model that answered, whatever name the client used.
    let model = app.options.model.clone();
    let in_flight = InFlight::new(&app);
    let logprobs = req.logprobs().is_some();
    if req.stream {
        // Headers wait for the answer's first text: a question refused
        // before it gets its status, not a 200 with an error inside.
        let mut first = Vec::new();
        while let Some(e) = rx.recv().await {
            match e {
                AnswerEvent::Started { .. } => {}
                AnswerEvent::Failed(f) => return Err(ApiError::failed(f)),
                AnswerEvent::Token { ref text, .. } if text.is_empty() => first.push(e),
                e => {
                    first.push(e);
                    break;
                }
            }
        }
        let reply = Reply {
            id,
            model,
            logprobs,
        };
        Ok(stream(first, rx, reply, (in_flight, stop)).into_response())
    } else {
        let r = complete(rx, id, model, logprobs).await;
        drop((in_flight, stop));
        r
    }
}

fn rand_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    t ^ NEXT.fetch_add(1, Ordering::SeqCst).rotate_left(32)
}

fn finish_reason(stop: StopReason) -> &'static str {
    match stop {
        StopReason::MaxTokens => "length",
        StopReason::EndOfTurn | StopReason::Cancelled | StopReason::Doubted => "stop",
    }
}

/// The sources of an answer, as paths inside the folder only.
fn sources(done: &Answered) -> Vec<Value> {
    done.answer
        .sources
        .iter()
        .zip(&done.texts)
        .filter(|(s, _)| inside_folder(&s.chunk.path))
        .enumerate()
        .map(|(i, (s, text))| {
            let c = &s.chunk;
            json!({
                "rank": i + 1, "path": c.path, "lines": [c.lines.0, c.lines.1],
                "heading": c.heading,
                "location": c.place.as_ref().map(|p: &Place| {
                    let mut v = serde_json::to_value(p).unwrap_or_default();
                    v["text"] = p.to_string().into();
                    v
                }),
                "score": s.hit.score,
                "text": text,
            })
        })
        .collect()
}

/// A source path as the index records it: relative, with no way out.
fn inside_folder(path: &str) -> bool {
    let p = std::path::Path::new(path);
    p.is_relative()
        && p.components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

fn usage(done: &Answered) -> Value {
    let a = &done.answer;
    let completion = a.generated.tokens.len();
    json!({
        "prompt_tokens": a.prompt_tokens, "completion_tokens": completion,
        "total_tokens": a.prompt_tokens + completion,
        "ttft_ms": a.ttft.as_secs_f64() * 1e3,
        "decode_tokens_per_s": a.generated.decode_tokens_per_s(),
        "mode": a.mode.to_string(),
        "conversation_turns": a.turns_kept,
        "states_encoded": a.states.computed(),
        "states_from_memory": a.states.from_memory,
        "states_from_disk": a.states.from_disk,
        "states_from_store": a.states.from_store,
        "state_store_bytes": a.states.store_bytes,
        "state_store_ms": a.states.store_ms,
        "notes": a.notes,
    })
}

fn count(app: &App, done: &Answered) {
    let a = &done.answer;
    if a.generated.stop == StopReason::Cancelled {
        app.cancelled.fetch_add(1, Ordering::SeqCst);
        app.metrics.outcome(Outcome::Cancelled);
    } else {
        app.answered.fetch_add(1, Ordering::SeqCst);
        app.metrics.outcome(Outcome::Answered);
    }
    app.metrics.answer(&AnswerFigures {
        ttft_s: a.ttft.as_secs_f64(),
        decode_tokens_per_s: a.generated.decode_tokens_per_s(),
        prompt_tokens: a.prompt_tokens,
        completion_tokens: a.generated.tokens.len(),
        states_from_memory: a.states.from_memory,
        states_from_disk: a.states.from_disk,
        states_from_store: a.states.from_store,
        states_encoded: a.states.computed(),
    });
}

/// A token's log-probability as OpenAI writes it (`-9999` for one the
/// model gave no chance, which JSON cannot spell).
fn logprob_value(lp: f32) -> f64 {
    if lp.is_finite() {
        lp as f64
    } else {
        -9999.0
    }
}

/// `logprobs.content` entries for `tokens`, in OpenAI's shape.
fn logprobs_content(tokens: &[TokenLogprob]) -> Vec<Value> {
    tokens
        .iter()
        .map(|t| {
            let top: Vec<Value> = t
                .top
                .iter()
                .map(|a| {
                    json!({
                        "token": String::from_utf8_lossy(&a.bytes), "logprob": logprob_value(a.logprob),
                        "bytes": a.bytes,
                    })
                })
                .collect();
            json!({
                "token": String::from_utf8_lossy(&t.bytes), "logprob": logprob_value(t.logprob),
                "bytes": t.bytes, "top_logprobs": top,
            })
        })
        .collect()
}

async fn complete(
    mut rx: mpsc::Receiver<AnswerEvent>,
    id: String,
    model: String,
    logprobs: bool,
) -> Result<Response, ApiError> {
    let mut tokens = Vec::new();
    while let Some(e) = rx.recv().await {
        match e {
            AnswerEvent::Started { .. } => {}
            AnswerEvent::Token { tokens: t, .. } => {
                if logprobs {
                    tokens.extend(t);
                }
            }
            AnswerEvent::Failed(f) => return Err(ApiError::failed(f)),
            AnswerEvent::Answered(done) => {
                let g = &done.answer.generated;
                let logprobs = logprobs
                    .then(|| json!({"content": logprobs_content(&tokens), "refusal": null}));
                return Ok(Json(json!({
                    "id": id, "object": "chat.completion", "created": now(), "model": model,
                    "choices": [{
                        "index": 0, "finish_reason": finish_reason(g.stop), "logprobs": logprobs,
                        "message": {"role": "assistant", "content": g.text},
                    }],
                    "usage": usage(&done),
                    "sources": sources(&done),
                }))
                .into_response());
            }
        }
    }
    Err(ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "server_error",
        "the answer ended without a result",
    ))
}

/// What every chunk of one streamed response names.
struct Reply {
    id: String,
    model: String,
    /// Each content chunk carries its tokens' log-probabilities.
    logprobs: bool,
}

/// Server-sent events: a role chunk, content chunks (`first`, already
/// received, then the rest of `rx`), the closing chunk with its finish
/// reason, then one with no choices carrying usage and sources, then
/// `[DONE]`.
fn stream(
    first: Vec<AnswerEvent>,
    mut rx: mpsc::Receiver<AnswerEvent>,
    reply: Reply,
    held: (InFlight, StopOnDrop),
) -> Sse<impl tokio_stream::Stream<Item = Result<Event, Infallible>>> {
    let (out, events) = mpsc::channel::<Result<Event, Infallible>>(64);
    tokio::spawn(async move {
        // Dropped when this task ends: a client gone stops the answer.
        let _held = held;
        let Reply {
            id,
            model,
            logprobs,
        } = reply;
        let created = now();
        let chunk = |delta: Value, finish: Option<&str>, tokens: Option<&[TokenLogprob]>| {
            let logprobs = tokens.map(|t| json!({"content": logprobs_content(t), "refusal": null}));
            let v = json!({
                "id": id, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": logprobs}],
            });
            Ok(Event::default().data(v.to_string()))
        };
        if out
            .send(chunk(
                json!({"role": "assistant", "content": ""}),
                None,
                None,
            ))
            .await
            .is_err()
        {
            return;
        }
        let mut first = first.into_iter();
        loop {
            // A client that leaves is noticed even while nothing is sent.
            let e = match first.next() {
                Some(e) => e,
                None => tokio::select! {
                    e = rx.recv() => match e {
                        Some(e) => e,
                        None => break,
                    },
                    () = out.closed() => break,
                },
            };
            let sent = match e {
                AnswerEvent::Started { .. } => continue,
                AnswerEvent::Token { text, tokens } => {
                    let t = logprobs.then_some(tokens.as_slice());
                    out.send(chunk(json!({"content": text}), None, t)).await
                }
                AnswerEvent::Failed(f) => {
                    // Headers went out with the first text: the error is
                    // the stream's last event, typed as a 400 or a 500
                    // would be.
                    let kind = if f.by_request() {
                        "invalid_request_error"
                    } else {
                        "server_error"
                    };
                    let v = json!({"error": {"message": f.message, "type": kind, "code": f.code}});
                    let _ = out.send(Ok(Event::default().data(v.to_string()))).await;
                    let _ = out.send(Ok(Event::default().data("[DONE]"))).await;
                    break;
                }
                AnswerEvent::Answered(done) => {
                    let stop = finish_reason(done.answer.generated.stop);
                    if out.send(chunk(json!({}), Some(stop), None)).await.is_err() {
                        break;
                    }
                    // Usage (with the timing) always: it is what this
                    // server is for; clients skip chunks without choices.
                    let last = json!({
                        "id": id, "object": "chat.completion.chunk", "created": created,
                        "model": model, "choices": [], "sources": sources(&done),
                        "usage": usage(&done),
                    });
                    let _ = out.send(Ok(Event::default().data(last.to_string()))).await;
                    let _ = out.send(Ok(Event::default().data("[DONE]"))).await;
                    break;
                }
            };
            if sent.is_err() {
                break; // the client is gone: dropping `rx` stops the answer
            }
        }
    });
    Sse::new(tokio_stream::wrappers::ReceiverStream::new(events)).keep_alive(KeepAlive::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_relative_paths_inside_the_folder_are_sources() {
        assert!(inside_folder("docs/a.md"));
        assert!(!inside_folder("/etc/passwd"));
        assert!(!inside_folder("../secret.txt"));
        assert!(!inside_folder("docs/../../x"));
    }

    /// A body without a declared length (chunked) is cut at the limit by
    /// the reader itself: 413, not a generic "cannot read" 400.
    #[test]
    fn an_undeclared_body_past_the_limit_is_413() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        let read = |n: usize| {
            rt.block_on(read_body(
                100,
                Duration::from_secs(5),
                &HeaderMap::new(),
                Body::from(vec![b'x'; n]),
            ))
        };
        assert_eq!(read(100).map(|b| b.len()).ok(), Some(100));
        let e = read(101).expect_err("past the limit");
        assert_eq!(e.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", e.message);
    }
}
