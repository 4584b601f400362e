//! Requests from where they belong, checked before any work: a web page
//! the user happens to visit must not read the folder. Three holes are
//! closed, as Ollama closes them:
//! - **DNS rebinding**: a page on `evil.example` re-points its name at
//!   127.0.0.1 and calls the API as same-origin; its requests still carry
//!   `Host: evil.example`. Only hosts that name this server are answered:
//!   IP literals of the bound address, `localhost` (and `*.localhost`),
//!   and the names given with `--allowed-host`.
//! - **Cross-site requests**: a browser marks them with `Origin`. An origin
//!   is allowed when `--cors` lists it (or `*`), or when it is the server's
//!   own.
//! - **"Simple" requests**: a `text/plain` or form POST skips the CORS
//!   preflight, so a body must be declared `application/json`.

use std::net::{IpAddr, SocketAddr};

use axum::http::{header, HeaderMap, Method, StatusCode};

use super::ApiError;

/// Who may call the server.
#[derive(Clone, Debug)]
pub(crate) struct Guard {
    bound: SocketAddr,
    /// `--allowed-host` names, lowercased; `*` allows any.
    hosts: Vec<String>,
    /// `--cors` origins, lowercased without a trailing slash; `*` any.
    origins: Vec<String>,
}

impl Guard {
    pub(crate) fn new(bound: SocketAddr, hosts: &[String], origins: &[String]) -> Self {
        let norm = |s: &String| s.trim().trim_end_matches('/').to_ascii_lowercase();
        Self {
            bound,
            hosts: hosts.iter().map(norm).collect(),
            origins: origins.iter().map(norm).collect(),
        }
    }

    /// `Ok` for a request this server should look at; else the 403 (or
    /// 415) that refuses it.
    pub(crate) fn check(&self, method: &Method, headers: &HeaderMap) -> Result<(), ApiError> {
        let host = headers.get(header::HOST).map(|h| h.to_str().unwrap_or(""));
        if let Some(host) = host {
            if !self.host_allowed(host) {
                return Err(forbidden(format!(
                    "Host {host:?} is not this server's: requests must name it as localhost, \
                     its IP address or an --allowed-host name (DNS rebinding protection)"
                )));
            }
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("");
            if !self.origin_allowed(origin, host) {
                return Err(forbidden(format!(
                    "Origin {origin:?} is not allowed: start serve with --cors {origin} \
                     to let that page call the API"
                )));
            }
        }
        if method == Method::POST && !is_json(headers) {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "invalid_request_error",
                "the body must be JSON, sent with Content-Type: application/json",
            ));
        }
        Ok(())
    }

    fn host_allowed(&self, host: &str) -> bool {
        let name = host_name(host).to_ascii_lowercase();
        if self.hosts.iter().any(|h| h == "*" || *h == name) {
            return true;
        }
        if name == "localhost" || name.ends_with(".localhost") {
            return true;
        }
        match name.parse::<IpAddr>() {
            // A literal address is not a name an attacker's DNS can move.
            Ok(ip) => {
                let bound = self.bound.ip();
                bound.is_unspecified() || ip == bound || (bound.is_loopback() && ip.is_loopback())
            }
            Err(_) => false,
        }
    }

    fn origin_allowed(&self, origin: &str, host: Option<&str>) -> bool {
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        if self.origins.iter().any(|o| o == "*" || *o == origin) {
            return true;
        }
        // The server's own origin: a page it served (or a client that
        // copies Host into Origin). `null` (a sandboxed frame, a file) is
        // never its own.
        host.is_some_and(|h| origin == format!("http://{}", h.to_ascii_lowercase()))
    }
}

/// The host of a `Host` header: without its port, an IPv6 literal without
/// its brackets.
fn host_name(host: &str) -> &str {
    let host = host.trim();
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

/// `Content-Type: application/json`, with or without parameters
/// (`; charset=utf-8`).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
}

fn forbidden(message: String) -> ApiError {
    ApiError {
        code: Some("forbidden"),
        ..ApiError::new(StatusCode::FORBIDDEN, "permission_error", message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().expect("header value"));
        }
        h
    }

    fn status(g: &Guard, method: Method, pairs: &[(&'static str, &str)]) -> u16 {
        match g.check(&method, &headers(pairs)) {
            Ok(()) => 200,
            Err(e) => e.status.as_u16(),
        }
    }

    const JSON: (&str, &str) = ("content-type", "application/json");

    #[test]
    fn only_hosts_that_name_this_server_are_answered() {
        let g = Guard::new("127.0.0.1:8080".parse().expect("addr"), &[], &[]);
        for host in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST",
            "app.localhost:8080",
            "[::1]:8080",
            "127.0.0.2",
        ] {
            assert_eq!(status(&g, Method::GET, &[("host", host)]), 200, "{host}");
        }
        // No Host at all (HTTP/1.0 tools): no browser sends that.
        assert_eq!(status(&g, Method::GET, &[]), 200);
        for host in [
            "evil.example",
            "evil.example:8080",
            "localhost.evil.example",
            "10.0.0.5:8080",
            "",
        ] {
            assert_eq!(status(&g, Method::GET, &[("host", host)]), 403, "{host}");
        }
        let named = Guard::new(
            "0.0.0.0:8080".parse().expect("addr"),
            &["Docs.Example.LAN".into()],
            &[],
        );
        assert_eq!(
            status(&named, Method::GET, &[("host", "docs.example.lan:8080")]),
            200
        );
        assert_eq!(status(&named, Method::GET, &[("host", "10.0.0.5")]), 200);
        assert_eq!(
            status(&named, Method::GET, &[("host", "other.example.lan")]),
            403
        );
    }

    #[test]
    fn browsers_from_other_origins_need_cors() {
        let host = ("host", "127.0.0.1:8080");
        let g = Guard::new("127.0.0.1:8080".parse().expect("addr"), &[], &[]);
        let cross = [host, JSON, ("origin", "https://evil.example")];
        assert_eq!(status(&g, Method::POST, &cross), 403);
        assert_eq!(
            status(&g, Method::POST, &[host, JSON, ("origin", "null")]),
            403
        );
        // The server's own origin, and no origin (curl, SDKs).
        let own = [host, JSON, ("origin", "http://127.0.0.1:8080")];
        assert_eq!(status(&g, Method::POST, &own), 200);
        assert_eq!(status(&g, Method::POST, &[host, JSON]), 200);
        let listed = Guard::new(
            "127.0.0.1:8080".parse().expect("addr"),
            &[],
            &["https://Notes.example/".into()],
        );
        let from_listed = [host, JSON, ("origin", "https://notes.example")];
        assert_eq!(status(&listed, Method::POST, &from_listed), 200);
        assert_eq!(status(&listed, Method::POST, &cross), 403);
        let any = Guard::new("127.0.0.1:8080".parse().expect("addr"), &[], &["*".into()]);
        assert_eq!(status(&any, Method::POST, &cross), 200);
    }

    #[test]
    fn a_body_must_be_declared_json() {
        let g = Guard::new("127.0.0.1:8080".parse().expect("addr"), &[], &[]);
        let host = ("host", "localhost");
        for ct in [
            "application/json",
            "application/json; charset=utf-8",
            "Application/JSON",
        ] {
            assert_eq!(
                status(&g, Method::POST, &[host, ("content-type", ct)]),
                200,
                "{ct}"
            );
        }
        for ct in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data",
        ] {
            assert_eq!(
                status(&g, Method::POST, &[host, ("content-type", ct)]),
                415,
                "{ct}"
            );
        }
        assert_eq!(status(&g, Method::POST, &[host]), 415);
        // A GET has no body to declare.
        assert_eq!(status(&g, Method::GET, &[host]), 200);
    }
}
