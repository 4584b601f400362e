//! `ape-chat serve`: an OpenAI-compatible HTTP API over the folder service
//! (axum on tokio). `POST /v1/chat/completions` (streamed as server-sent
//! events, or not): the last user message is the question, the messages
//! before it the conversation; sources come back in a `sources` field (and,
//! streamed, in a last chunk before `[DONE]`), the timing in `usage`.
//! `GET /v1/models`, `GET /health`.
//!
//! The model computes one thing at a time: requests queue in the service
//! (questions before background indexing), and past its bound are refused
//! at once with 429 and `Retry-After`. A client that goes away stops its
//! answer at the next token. Errors are OpenAI error objects.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::answer::AskOptions;
use crate::conversation::{self, Message};
use crate::engine::{Sampling, StopReason};
use crate::index::TopK;
use crate::ingest::Place;
use crate::service::{AnswerEvent, Answered, AskRefused, Handle, Question};

/// How the server runs.
#[derive(Clone, Debug)]
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
    /// Origins allowed by CORS (none: CORS off).
    pub cors: Vec<String>,
    /// Answer settings a request may override (tokens, sampling).
    pub ask: AskOptions,
}

/// Largest `max_tokens` a request may ask for.
const MAX_TOKENS_CAP: usize = 4096;

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
}

struct App {
    options: ServerOptions,
    handle: Handle,
    folder: Arc<Mutex<FolderStatus>>,
    answered: AtomicU64,
    cancelled: AtomicU64,
    refused: AtomicU64,
    in_flight: AtomicUsize,
}

/// An OpenAI-style error response.
#[derive(Debug)]
struct ApiError {
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

    fn unsupported(param: &str, message: impl Into<String>) -> Self {
        Self {
            param: Some(param.to_string()),
            code: Some("unsupported_parameter"),
            ..Self::invalid(message)
        }
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

/// A chat completion request: the fields OpenAI defines. Any other field
/// is refused (400), and fields whose feature ape-chat does not have are
/// refused when they ask for it, never silently ignored.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChatRequest {
    messages: Vec<Message>,
    /// Any name is accepted (clients send their own); responses name the
    /// served model.
    #[serde(default)]
    #[allow(dead_code)]
    model: Option<String>,
    #[serde(default)]
    stream: bool,
    /// Accepted; usage is always sent.
    #[serde(default)]
    #[allow(dead_code)]
    stream_options: Option<StreamOptions>,
    #[serde(default)]
    max_tokens: Option<u32>,
    #[serde(default)]
    max_completion_tokens: Option<u32>,
    #[serde(default)]
    temperature: Option<f32>,
    #[serde(default)]
    top_p: Option<f32>,
    #[serde(default)]
    seed: Option<u32>,
    #[serde(default)]
    n: Option<u32>,
    /// An end-user id for the caller's records: no effect here.
    #[serde(default)]
    #[allow(dead_code)]
    user: Option<String>,
    #[serde(default)]
    stop: Option<Value>,
    #[serde(default)]
    tools: Option<Value>,
    #[serde(default)]
    tool_choice: Option<Value>,
    #[serde(default)]
    functions: Option<Value>,
    #[serde(default)]
    response_format: Option<Value>,
    #[serde(default)]
    logprobs: Option<bool>,
    #[serde(default)]
    top_logprobs: Option<u32>,
    #[serde(default)]
    logit_bias: Option<Value>,
    #[serde(default)]
    presence_penalty: Option<f32>,
    #[serde(default)]
    frequency_penalty: Option<f32>,
    /// ape-chat's own (`extra_body` in OpenAI's clients): chunks to read, a
    /// number or `"all"`, as `--top-k`.
    #[serde(default)]
    top_k: Option<TopK>,
    /// ape-chat's own: files (relative to the folder) read whole besides
    /// the best chunks, as `--file`.
    #[serde(default)]
    files: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StreamOptions {
    #[serde(default)]
    #[allow(dead_code)]
    include_usage: bool,
}

impl ChatRequest {
    /// Refuses what is asked for but not supported.
    fn check(&self) -> Result<(), ApiError> {
        let present = |v: &Option<Value>| v.as_ref().is_some_and(|v| !v.is_null());
        let nonempty = |v: &Option<Value>| {
            v.as_ref().is_some_and(|v| match v {
                Value::Null => false,
                Value::Array(a) => !a.is_empty(),
                Value::Object(o) => !o.is_empty(),
                Value::String(s) => !s.is_empty(),
                _ => true,
            })
        };
        if self.n.is_some_and(|n| n != 1) {
            return Err(ApiError::unsupported(
                "n",
                "n must be 1: one answer per request",
            ));
        }
        if nonempty(&self.tools) || nonempty(&self.functions) || present(&self.tool_choice) {
            return Err(ApiError::unsupported(
                "tools",
                "tools and function calling are not supported",
            ));
        }
        if self.logprobs == Some(true) || self.top_logprobs.is_some() {
            return Err(ApiError::unsupported(
                "logprobs",
                "logprobs are not supported",
            ));
        }
        if nonempty(&self.logit_bias) {
            return Err(ApiError::unsupported(
                "logit_bias",
                "logit_bias is not supported",
            ));
        }
        if nonempty(&self.stop) {
            return Err(ApiError::unsupported(
                "stop",
                "stop sequences are not supported",
            ));
        }
        if let Some(f) = &self.response_format {
            if f.get("type").and_then(Value::as_str) != Some("text") {
                return Err(ApiError::unsupported(
                    "response_format",
                    "only the text response format is supported",
                ));
            }
        }
        for (name, v) in [
            ("presence_penalty", self.presence_penalty),
            ("frequency_penalty", self.frequency_penalty),
        ] {
            if v.is_some_and(|v| v != 0.0) {
                return Err(ApiError::unsupported(
                    name,
                    format!("{name} is not supported"),
                ));
            }
        }
        if self.temperature.is_some_and(|t| !(0.0..=2.0).contains(&t)) {
            return Err(ApiError::invalid("temperature must be between 0 and 2"));
        }
        if self.top_p.is_some_and(|p| !(p > 0.0 && p <= 1.0)) {
            return Err(ApiError::invalid("top_p must be in (0, 1]"));
        }
        Ok(())
    }

    /// The server's answer settings with this request's overrides.
    fn options(&self, base: AskOptions) -> Result<AskOptions, ApiError> {
        let mut o = base;
        if let Some(n) = self.max_completion_tokens.or(self.max_tokens) {
            if n == 0 || n as usize > MAX_TOKENS_CAP {
                return Err(ApiError::invalid(format!(
                    "max_tokens must be between 1 and {MAX_TOKENS_CAP}"
                )));
            }
            o.generate.max_tokens = n as usize;
        }
        let seed = self.seed.unwrap_or(42);
        match self.temperature {
            Some(t) if t > 0.0 => {
                o.generate.sampling = Sampling::Sample {
                    temperature: t,
                    top_p: self.top_p.unwrap_or(1.0),
                    seed,
                }
            }
            Some(_) => o.generate.sampling = Sampling::Greedy,
            None => {}
        }
        if let Some(k) = self.top_k {
            o.top_k = k;
        }
        Ok(o)
    }
}

/// Serves until `shutdown` resolves, then drains the requests in flight.
pub async fn serve(
    options: ServerOptions,
    handle: Handle,
    folder: Arc<Mutex<FolderStatus>>,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let cors = cors_layer(&options.cors);
    let app = Arc::new(App {
        options,
        handle,
        folder,
        answered: AtomicU64::new(0),
        cancelled: AtomicU64::new(0),
        refused: AtomicU64::new(0),
        in_flight: AtomicUsize::new(0),
    });
    let mut router = Router::new()
        .route("/v1/chat/completions", post(chat))
        .route("/v1/models", get(models))
        .route("/health", get(health))
        .route("/v1/health", get(health))
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
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
}

fn cors_layer(origins: &[String]) -> Option<tower_http::cors::CorsLayer> {
    use tower_http::cors::{AllowOrigin, Any, CorsLayer};
    if origins.is_empty() {
        return None;
    }
    let allow = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(
            origins
                .iter()
                .filter_map(|o| HeaderValue::from_str(o).ok())
                .collect::<Vec<_>>(),
        )
    };
    Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods(Any)
            .allow_headers(Any),
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
    let body = json!({
        "status": status, "folder": folder, "model": app.options.model,
        "waiting": app.handle.waiting(), "in_flight": app.in_flight.load(Ordering::SeqCst),
        "answered": app.answered.load(Ordering::SeqCst),
        "cancelled": app.cancelled.load(Ordering::SeqCst),
        "refused": app.refused.load(Ordering::SeqCst),
    });
    (code, Json(body)).into_response()
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

/// Parses and checks a request: the question, its conversation, options.
fn parse(app: &App, bytes: &[u8]) -> Result<(ChatRequest, Question), ApiError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| ApiError::invalid(format!("the body is not UTF-8: {e}")))?;
    let req: ChatRequest = serde_json::from_str(text)
        .map_err(|e| ApiError::invalid(format!("the body is not a chat request: {e}")))?;
    req.check()?;
    let options = req.options(app.options.ask.clone())?;
    let files = req.files.clone();
    let (text, history) = conversation::from_messages(&req.messages).map_err(|e| ApiError {
        param: Some("messages".into()),
        ..ApiError::invalid(e.to_string())
    })?;
    Ok((
        req,
        Question {
            text,
            history,
            options: Some(options),
            files,
        },
    ))
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

async fn chat_inner(app: Arc<App>, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    authorize(&app, &headers)?;
    let bytes = read_body(app.options.max_body, app.options.timeout, &headers, body).await?;
    let (req, question) = parse(&app, &bytes)?;
    let ticket = app.handle.ask(question).map_err(|e| match e {
        AskRefused::Busy(_) => {
            app.refused.fetch_add(1, Ordering::SeqCst);
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
        AskRefused::Stopped => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "server_error",
            "the server is shutting down",
        ),
    })?;
    // The service's events, carried onto the async side; when the client
    // is gone (the receiver dropped) the answer is stopped, and its end
    // still counted.
    let (tx, rx) = mpsc::channel::<AnswerEvent>(64);
    let cancel = Arc::clone(&ticket.cancel);
    let counts = Arc::clone(&app);
    tokio::task::spawn_blocking(move || {
        let mut gone = false;
        for e in ticket.events {
            if let AnswerEvent::Answered(done) = &e {
                count(&counts, done);
            }
            if !gone && tx.blocking_send(e).is_err() {
                cancel.store(true, Ordering::SeqCst);
                gone = true;
            }
        }
    });
    let id = format!("chatcmpl-{:016x}", rand_id());
    // The model that answered, whatever name the client used.
    let model = app.options.model.clone();
    let in_flight = InFlight::new(&app);
    if req.stream {
        Ok(stream(rx, id, model, in_flight).into_response())
    } else {
        complete(rx, id, model, in_flight).await
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
        StopReason::EndOfTurn | StopReason::Cancelled => "stop",
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
        "notes": a.notes,
    })
}

fn count(app: &App, done: &Answered) {
    if done.answer.generated.stop == StopReason::Cancelled {
        app.cancelled.fetch_add(1, Ordering::SeqCst);
    } else {
        app.answered.fetch_add(1, Ordering::SeqCst);
    }
}

async fn complete(
    mut rx: mpsc::Receiver<AnswerEvent>,
    id: String,
    model: String,
    _in_flight: InFlight,
) -> Result<Response, ApiError> {
    while let Some(e) = rx.recv().await {
        match e {
            AnswerEvent::Started { .. } | AnswerEvent::Token(_) => {}
            AnswerEvent::Failed(f) if f.by_request => return Err(ApiError::invalid(f.message)),
            AnswerEvent::Failed(f) => {
                return Err(ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "server_error",
                    f.message,
                ))
            }
            AnswerEvent::Answered(done) => {
                let g = &done.answer.generated;
                return Ok(Json(json!({
                    "id": id, "object": "chat.completion", "created": now(), "model": model,
                    "choices": [{
                        "index": 0, "finish_reason": finish_reason(g.stop), "logprobs": null,
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

/// Server-sent events: a role chunk, content chunks, the closing chunk
/// with its finish reason, then one with no choices carrying usage and
/// sources, then `[DONE]`.
fn stream(
    mut rx: mpsc::Receiver<AnswerEvent>,
    id: String,
    model: String,
    in_flight: InFlight,
) -> Sse<impl tokio_stream::Stream<Item = Result<Event, Infallible>>> {
    let (out, events) = mpsc::channel::<Result<Event, Infallible>>(64);
    tokio::spawn(async move {
        let _in_flight = in_flight;
        let created = now();
        let chunk = |delta: Value, finish: Option<&str>| {
            let v = json!({
                "id": id, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": null}],
            });
            Ok(Event::default().data(v.to_string()))
        };
        if out
            .send(chunk(json!({"role": "assistant", "content": ""}), None))
            .await
            .is_err()
        {
            return;
        }
        while let Some(e) = rx.recv().await {
            let sent = match e {
                AnswerEvent::Started { .. } => continue,
                AnswerEvent::Token(t) => out.send(chunk(json!({"content": t}), None)).await,
                AnswerEvent::Failed(f) => {
                    // Headers went out with the stream: the error is its
                    // last event, typed as a 400 or a 500 would be.
                    let kind = if f.by_request {
                        "invalid_request_error"
                    } else {
                        "server_error"
                    };
                    let v = json!({"error": {"message": f.message, "type": kind}});
                    let _ = out.send(Ok(Event::default().data(v.to_string()))).await;
                    break;
                }
                AnswerEvent::Answered(done) => {
                    let stop = finish_reason(done.answer.generated.stop);
                    if out.send(chunk(json!({}), Some(stop))).await.is_err() {
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

    #[test]
    fn unsupported_parameters_are_refused_by_name() {
        let req = |json: &str| -> Result<ChatRequest, String> {
            let r: ChatRequest = serde_json::from_str(json).map_err(|e| e.to_string())?;
            r.check().map_err(|e| e.message)?;
            Ok(r)
        };
        let msgs = r#""messages":[{"role":"user","content":"hi"}]"#;
        assert!(req(&format!("{{{msgs}}}")).is_ok());
        assert!(req(&format!("{{{msgs},\"n\":1,\"tools\":[],\"stop\":null}}")).is_ok());
        for (extra, says) in [
            (r#""n":2"#, "n must be 1"),
            (r#""tools":[{"type":"function"}]"#, "tools"),
            (r#""logprobs":true"#, "logprobs"),
            (r#""stop":["x"]"#, "stop"),
            (r#""presence_penalty":0.5"#, "presence_penalty"),
            (
                r#""response_format":{"type":"json_object"}"#,
                "text response format",
            ),
            (r#""temperature":3"#, "between 0 and 2"),
            (r#""frobnicate":1"#, "unknown field `frobnicate`"),
            (r#""max_tokens":"ten""#, "invalid type"),
            (r#""top_k":"many""#, "top-k must be"),
            (r#""top_k":0"#, "top-k must be"),
            (r#""files":"a.md""#, "invalid type"),
        ] {
            let e = req(&format!("{{{msgs},{extra}}}")).expect_err(extra);
            assert!(e.contains(says), "{extra}: {e}");
        }
    }

    #[test]
    fn top_k_and_whole_files_come_with_the_request() {
        let msgs = r#""messages":[{"role":"user","content":"hi"}]"#;
        let r: ChatRequest = serde_json::from_str(&format!(
            r#"{{{msgs},"top_k":"all","files":["a.md","b/c.csv"]}}"#
        ))
        .expect("parses");
        let o = r.options(AskOptions::default()).expect("options");
        assert_eq!(o.top_k, TopK::All);
        assert_eq!(r.files, ["a.md", "b/c.csv"]);
        let r: ChatRequest =
            serde_json::from_str(&format!(r#"{{{msgs},"top_k":12}}"#)).expect("parses");
        assert_eq!(
            r.options(AskOptions::default()).expect("options").top_k,
            TopK::Best(12)
        );
        // Unset, the server's own setting stays.
        let r: ChatRequest = serde_json::from_str(&format!("{{{msgs}}}")).expect("parses");
        let base = AskOptions {
            top_k: TopK::Best(3),
            ..AskOptions::default()
        };
        assert_eq!(r.options(base).expect("options").top_k, TopK::Best(3));
        assert!(r.files.is_empty());
    }
}
