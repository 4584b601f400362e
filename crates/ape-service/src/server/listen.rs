//! The accept loop, with every resource a client can hold bounded (as
//! nginx and hyper's own timers bound them; `axum::serve` has neither):
//! - a connection with no request in progress (a header still arriving,
//!   or kept alive between requests) is closed after the idle timeout;
//! - at most `max_connections` are open: past it the longest-open idle one
//!   is closed to make room, and when every one is busy the newcomer gets
//!   a 503 (said in the log);
//! - a client that stops reading (its receive window full, a write stuck)
//!   is cut after the idle timeout too, so a stalled reader cannot hold a
//!   connection busy for good;
//! - on shutdown, idle connections close at once and busy ones may finish
//!   for `drain`; then every one is dropped, which stops its answer.
//!
//! A request is "in progress" from its parsed header until its response
//! body is dropped (sent, or abandoned).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, Response};
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::future::Future;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{AbortHandle, JoinSet};
use tower_service::Service;

use super::{Log, LogLevel};

/// What one client may hold.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// How long a connection may sit with no request in progress: a
    /// request header still arriving (a slow or stalled client), or the
    /// wait for the next request on a kept-alive connection.
    pub idle: Duration,
    /// Open connections at most.
    pub max_connections: usize,
    /// On shutdown, how long requests in progress may go on.
    pub drain: Duration,
}

/// One open connection, as the accept loop sees it.
struct Conn {
    /// Requests in progress on it.
    busy: Arc<AtomicUsize>,
    abort: AbortHandle,
}

/// The open connections by age (ids grow).
#[derive(Default)]
struct Conns(Mutex<BTreeMap<u64, Conn>>);

impl Conns {
    fn len(&self) -> usize {
        self.0.lock().map(|m| m.len()).unwrap_or(0)
    }

    /// Closes the longest-open connection with no request in progress.
    fn evict_idle(&self) -> bool {
        let Ok(mut m) = self.0.lock() else {
            return false;
        };
        let idle = m
            .iter()
            .find(|(_, c)| c.busy.load(Ordering::SeqCst) == 0)
            .map(|(&id, _)| id);
        match idle.and_then(|id| m.remove(&id)) {
            Some(c) => {
                c.abort.abort();
                true
            }
            None => false,
        }
    }
}

/// Removes its connection from the table however its task ends.
struct Registered(Arc<Conns>, u64);

impl Drop for Registered {
    fn drop(&mut self) {
        if let Ok(mut m) = self.0 .0.lock() {
            m.remove(&self.1);
        }
    }
}

/// Counts a request in progress until dropped.
struct Busy(Arc<AtomicUsize>);

impl Busy {
    fn new(n: &Arc<AtomicUsize>) -> Self {
        n.fetch_add(1, Ordering::SeqCst);
        Self(Arc::clone(n))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A response body that keeps its request counted as in progress.
struct Tracked {
    body: Body,
    _busy: Busy,
}

impl http_body::Body for Tracked {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// A socket whose writes may not stay stuck longer than `limit`: a write
/// the kernel cannot take (the client reads nothing) fails then, which
/// ends the connection.
struct StallLimit {
    io: TcpStream,
    limit: Duration,
    stuck: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl StallLimit {
    fn poll_stalled(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Error> {
        let limit = self.limit;
        let timer = self
            .stuck
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the client stopped reading",
            )),
            Poll::Pending => Poll::Pending,
        }
    }

    fn wrote<T>(
        &mut self,
        cx: &mut Context<'_>,
        r: Poll<std::io::Result<T>>,
    ) -> Poll<std::io::Result<T>> {
        match r {
            Poll::Pending => match self.poll_stalled(cx) {
                Poll::Ready(e) => Poll::Ready(Err(e)),
                Poll::Pending => Poll::Pending,
            },
            done => {
                self.stuck = None;
                done
            }
        }
    }
}

impl tokio::io::AsyncRead for StallLimit {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for StallLimit {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.io).poll_write(cx, buf);
        self.wrote(cx, r)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let r = Pin::new(&mut self.io).poll_flush(cx);
        self.wrote(cx, r)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.wrote(cx, r)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

/// Serves `router` on `listener` until `shutdown` resolves, then drains
/// within `limits.drain`.
pub async fn run(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    log: Log,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let conns = Arc::new(Conns::default());
    let mut tasks = JoinSet::new();
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut next_id = 0u64;
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => continue,
            a = listener.accept() => a,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors, mostly: the next accept may
                // succeed once a connection closes.
                log(LogLevel::Warn, &format!("accept failed: {e}"));
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        if conns.len() >= limits.max_connections && !conns.evict_idle() {
            log(
                LogLevel::Warn,
                &format!(
                    "{} connections, all busy: a new one was refused (503)",
                    limits.max_connections
                ),
            );
            tasks.spawn(refuse(stream));
            continue;
        }
        let busy = Arc::new(AtomicUsize::new(0));
        let id = next_id;
        next_id += 1;
        let registered = Registered(Arc::clone(&conns), id);
        // Registered before the task can end and unregister itself.
        let Ok(mut table) = conns.0.lock() else {
            continue;
        };
        let abort = tasks.spawn(connection(
            stream,
            router.clone(),
            Arc::clone(&busy),
            limits.idle,
            stop_rx.clone(),
            registered,
        ));
        table.insert(id, Conn { busy, abort });
        drop(table);
    }
    drop(listener);
    let _ = stop_tx.send(true);
    let drained = tokio::time::timeout(limits.drain, async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        log(
            LogLevel::Warn,
            &format!(
                "{} connections still busy after {} s: closed",
                tasks.len(),
                limits.drain.as_secs()
            ),
        );
        // Dropping a request stops its answer at the next token.
        tasks.shutdown().await;
    }
}

/// One connection: HTTP/1.1 with the idle timeout, closed gracefully when
/// the server stops.
async fn connection(
    stream: TcpStream,
    router: Router,
    busy: Arc<AtomicUsize>,
    idle: Duration,
    mut stop: watch::Receiver<bool>,
    _registered: Registered,
) {
    let _ = stream.set_nodelay(true);
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let counted = Busy::new(&busy);
        let mut router = router.clone();
        async move {
            let r: Response<Body> = match router.call(req.map(Body::new)).await {
                Ok(r) => r,
                Err(e) => match e {},
            };
            Ok::<_, Infallible>(r.map(|body| {
                Body::new(Tracked {
                    body,
                    _busy: counted,
                })
            }))
        }
    });
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        // hyper starts this timer whenever it waits for a request head: a
        // new connection's first, and each next one on a kept-alive
        // connection. So it is the idle timeout as well.
        .header_read_timeout(idle)
        .serve_connection(
            TokioIo::new(StallLimit {
                io: stream,
                limit: idle,
                stuck: None,
            }),
            service,
        );
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = stop.wait_for(|s| *s) => {}
    }
    // Idle: closes now; busy: after its response.
    conn.as_mut().graceful_shutdown();
    let _ = conn.await;
}

/// A 503 for a connection past the cap, written and closed.
async fn refuse(mut stream: TcpStream) {
    let body = r#"{"error":{"message":"too many connections: try again shortly","type":"server_error","param":null,"code":"too_many_connections"}}"#;
    let reply = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 2\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        let _ = stream.write_all(reply.as_bytes()).await;
        let _ = stream.shutdown().await;
    })
    .await;
}
