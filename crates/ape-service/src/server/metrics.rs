//! `GET /metrics` (`serve --metrics`, as llama-server names it): the
//! server's load in Prometheus' text exposition format (version 0.0.4), so
//! an operator sees requests, the queue, time to first token, decode speed,
//! where chunk states came from and what the folder's indexing is doing
//! without reading logs. Figures are counted whether or not the endpoint
//! is on: a few atomic adds per request.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;

use crate::index::Stage;

/// Upper bounds (seconds) of the time-to-first-token histogram: from a
/// preloaded GPU answer to a long sequential prefill on two cores.
const TTFT_BUCKETS: &[f64] = &[0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];

/// Upper bounds (tokens per second) of the decode-speed histogram.
const DECODE_BUCKETS: &[f64] = &[1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 320.0];

/// The endpoints requests are counted by; anything else is `other`, so a
/// scanner's paths cannot grow the label set.
const ENDPOINTS: &[&str] = &[
    "/v1/chat/completions",
    "/v1/models",
    "/health",
    "/v1/health",
    "/metrics",
];

/// A cumulative histogram, as Prometheus reads one.
#[derive(Debug)]
struct Histogram {
    bounds: &'static [f64],
    /// Observations at or below each bound (not yet cumulative).
    counts: Vec<u64>,
    sum: f64,
    count: u64,
}

impl Histogram {
    fn new(bounds: &'static [f64]) -> Self {
        Self {
            bounds,
            counts: vec![0; bounds.len()],
            sum: 0.0,
            count: 0,
        }
    }

    fn observe(&mut self, v: f64) {
        if !v.is_finite() {
            return;
        }
        if let Some(i) = self.bounds.iter().position(|&b| v <= b) {
            self.counts[i] += 1;
        }
        self.sum += v;
        self.count += 1;
    }

    fn write(&self, out: &mut String, name: &str, help: &str) {
        head(out, name, "histogram", help);
        let mut cumulative = 0;
        for (b, c) in self.bounds.iter().zip(&self.counts) {
            cumulative += c;
            let _ = writeln!(out, "{name}_bucket{{le=\"{b}\"}} {cumulative}");
        }
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {}", self.count);
        let _ = writeln!(out, "{name}_sum {}", self.sum);
        let _ = writeln!(out, "{name}_count {}", self.count);
    }
}

/// A metric family's `HELP` and `TYPE` lines.
fn head(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// A family of one unlabelled sample.
fn one(out: &mut String, name: &str, kind: &str, help: &str, v: f64) {
    head(out, name, kind, help);
    let _ = writeln!(out, "{name} {v}");
}

/// How one question's answer ended, for `apechat_answers_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Outcome {
    Answered,
    /// Its client left mid-answer, or the server stopped it.
    Cancelled,
    /// Its client left before the service took it up.
    Abandoned,
    /// The queue was full: 429.
    Refused,
    /// The request asked for what cannot be (4xx).
    Invalid,
    /// The server failed it (5xx).
    Failed,
}

impl Outcome {
    fn label(self) -> &'static str {
        match self {
            Outcome::Answered => "answered",
            Outcome::Cancelled => "cancelled",
            Outcome::Abandoned => "abandoned",
            Outcome::Refused => "refused",
            Outcome::Invalid => "invalid",
            Outcome::Failed => "failed",
        }
    }
}

/// One finished answer's figures.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct AnswerFigures {
    pub ttft_s: f64,
    pub decode_tokens_per_s: f64,
    pub prompt_tokens: usize,
    pub completion_tokens: usize,
    pub states_from_memory: usize,
    pub states_from_disk: usize,
    pub states_from_store: usize,
    pub states_encoded: usize,
}

/// What the folder service is doing, as `/metrics` shows it.
#[derive(Clone, Debug, Default)]
pub(crate) struct FolderFigures {
    pub ready: bool,
    pub files: usize,
    pub chunks: usize,
    /// The stage in progress, with its units done and in all.
    pub stage: Option<(Stage, usize, usize)>,
    /// State files on disk after the last indexing pass.
    pub cache_bytes: u64,
}

/// Gauges read when scraped.
#[derive(Clone, Debug, Default)]
pub(crate) struct Gauges {
    pub in_flight: usize,
    pub waiting: usize,
    pub queue: usize,
    pub folder: FolderFigures,
}

#[derive(Debug)]
struct Counts {
    /// Responses by endpoint and status code.
    requests: BTreeMap<(&'static str, u16), u64>,
    outcomes: BTreeMap<Outcome, u64>,
    ttft: Histogram,
    decode: Histogram,
    prompt_tokens: u64,
    completion_tokens: u64,
    /// States an answer read, by where they came from.
    states: [u64; 4],
}

/// The server's counters.
#[derive(Debug)]
pub(crate) struct Metrics {
    counts: Mutex<Counts>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self {
            counts: Mutex::new(Counts {
                requests: BTreeMap::new(),
                outcomes: BTreeMap::new(),
                ttft: Histogram::new(TTFT_BUCKETS),
                decode: Histogram::new(DECODE_BUCKETS),
                prompt_tokens: 0,
                completion_tokens: 0,
                states: [0; 4],
            }),
        }
    }
}

impl Metrics {
    fn with(&self, f: impl FnOnce(&mut Counts)) {
        if let Ok(mut c) = self.counts.lock() {
            f(&mut c);
        }
    }

    /// A response sent for a request to `path`.
    pub fn request(&self, path: &str, status: u16) {
        let endpoint = ENDPOINTS
            .iter()
            .copied()
            .find(|&e| e == path)
            .unwrap_or("other");
        self.with(|c| *c.requests.entry((endpoint, status)).or_default() += 1);
    }

    pub fn outcome(&self, o: Outcome) {
        self.with(|c| *c.outcomes.entry(o).or_default() += 1);
    }

    /// A finished answer (cancelled ones included: their time counts).
    pub fn answer(&self, a: &AnswerFigures) {
        self.with(|c| {
            if a.completion_tokens > 0 {
                c.ttft.observe(a.ttft_s);
            }
            if a.decode_tokens_per_s > 0.0 {
                c.decode.observe(a.decode_tokens_per_s);
            }
            c.prompt_tokens += a.prompt_tokens as u64;
            c.completion_tokens += a.completion_tokens as u64;
            for (slot, n) in c.states.iter_mut().zip([
                a.states_from_memory,
                a.states_from_disk,
                a.states_from_store,
                a.states_encoded,
            ]) {
                *slot += n as u64;
            }
        });
    }

    /// Every figure, in the text format.
    pub fn render(&self, g: &Gauges) -> String {
        let mut out = String::new();
        let Ok(c) = self.counts.lock() else {
            return out;
        };
        head(
            &mut out,
            "apechat_requests_total",
            "counter",
            "HTTP responses by endpoint and status code.",
        );
        for ((endpoint, status), n) in &c.requests {
            let _ = writeln!(
                out,
                "apechat_requests_total{{endpoint=\"{endpoint}\",status=\"{status}\"}} {n}"
            );
        }
        head(
            &mut out,
            "apechat_answers_total",
            "counter",
            "Questions by how they ended: answered, cancelled (client gone mid-answer), abandoned (gone while queued), refused (queue full), invalid (4xx), failed (5xx).",
        );
        for o in [
            Outcome::Answered,
            Outcome::Cancelled,
            Outcome::Abandoned,
            Outcome::Refused,
            Outcome::Invalid,
            Outcome::Failed,
        ] {
            let n = c.outcomes.get(&o).copied().unwrap_or(0);
            let _ = writeln!(
                out,
                "apechat_answers_total{{outcome=\"{}\"}} {n}",
                o.label()
            );
        }
        let mut gauge = |name: &str, help: &str, v: f64| one(&mut out, name, "gauge", help, v);
        gauge(
            "apechat_requests_in_flight",
            "Chat requests being answered or waiting for the model.",
            g.in_flight as f64,
        );
        gauge(
            "apechat_questions_waiting",
            "Questions queued for the model (the one being answered included).",
            g.waiting as f64,
        );
        gauge(
            "apechat_queue_capacity",
            "Questions that may wait before requests are refused with 429 (--queue).",
            g.queue as f64,
        );
        let f = &g.folder;
        gauge(
            "apechat_folder_ready",
            "1 once the folder's text is indexed and questions are answered.",
            u8::from(f.ready) as f64,
        );
        gauge("apechat_folder_files", "Files indexed.", f.files as f64);
        gauge("apechat_folder_chunks", "Chunks indexed.", f.chunks as f64);
        gauge(
            "apechat_state_cache_bytes",
            "Chunk-state files on disk after the last indexing pass.",
            f.cache_bytes as f64,
        );
        let pending = match f.stage {
            Some((Stage::Text, done, total)) => total.saturating_sub(done),
            _ => 0,
        };
        gauge(
            "apechat_index_files_pending",
            "Files the text stage in progress still has to read.",
            pending as f64,
        );
        head(
            &mut out,
            "apechat_index_stage",
            "gauge",
            "1 for the indexing stage in progress (none: the folder is up to date).",
        );
        let stages = [
            (Stage::Text, "text"),
            (Stage::Vectors, "vectors"),
            (Stage::States, "states"),
            (Stage::Memory, "memory"),
        ];
        for (stage, name) in stages {
            let on = f.stage.is_some_and(|(s, _, _)| s == stage);
            let _ = writeln!(
                out,
                "apechat_index_stage{{stage=\"{name}\"}} {}",
                u8::from(on)
            );
        }
        head(
            &mut out,
            "apechat_index_stage_left",
            "gauge",
            "Units (files, vectors, states) the stage in progress still has to do.",
        );
        for (stage, name) in stages {
            let left = match f.stage {
                Some((s, done, total)) if s == stage => total.saturating_sub(done),
                _ => 0,
            };
            let _ = writeln!(out, "apechat_index_stage_left{{stage=\"{name}\"}} {left}");
        }
        c.ttft.write(
            &mut out,
            "apechat_ttft_seconds",
            "Time from a question being taken up to its first answer token.",
        );
        c.decode.write(
            &mut out,
            "apechat_decode_tokens_per_second",
            "Decode speed of each answer after its first token.",
        );
        let mut counter =
            |name: &str, help: &str, v: u64| one(&mut out, name, "counter", help, v as f64);
        counter(
            "apechat_prompt_tokens_total",
            "Tokens answers were conditioned on (prefix, chunks, conversation, question).",
            c.prompt_tokens,
        );
        counter(
            "apechat_completion_tokens_total",
            "Answer tokens generated.",
            c.completion_tokens,
        );
        head(
            &mut out,
            "apechat_states_total",
            "counter",
            "Chunk states answers read, by where they came from.",
        );
        for (name, n) in ["memory", "disk", "store", "encoded"].iter().zip(c.states) {
            let _ = writeln!(out, "apechat_states_total{{source=\"{name}\"}} {n}");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Buckets are cumulative and end at `+Inf` with the count; the sum is
    /// the observations'.
    #[test]
    fn a_histogram_is_cumulative() {
        let mut h = Histogram::new(&[1.0, 2.0]);
        for v in [0.5, 1.0, 1.5, 7.0, f64::NAN] {
            h.observe(v);
        }
        let mut out = String::new();
        h.write(&mut out, "x", "help");
        assert!(out.contains("x_bucket{le=\"1\"} 2\n"), "{out}");
        assert!(out.contains("x_bucket{le=\"2\"} 3\n"), "{out}");
        assert!(out.contains("x_bucket{le=\"+Inf\"} 4\n"), "{out}");
        assert!(
            out.contains("x_sum 10\n") && out.contains("x_count 4\n"),
            "{out}"
        );
    }

    #[test]
    fn unknown_paths_share_one_label() {
        let m = Metrics::default();
        m.request("/v1/chat/completions", 200);
        m.request("/wp-admin", 404);
        m.request("/.env", 404);
        let out = m.render(&Gauges::default());
        assert!(
            out.contains("apechat_requests_total{endpoint=\"other\",status=\"404\"} 2\n"),
            "{out}"
        );
        assert!(out.contains("endpoint=\"/v1/chat/completions\",status=\"200\"} 1\n"));
    }
}
