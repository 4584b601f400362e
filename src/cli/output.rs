//! Output several commands share: indexing progress (a bar per stage with
//! an ETA on a terminal, plain lines in a log) and the index report.

use std::io::IsTerminal;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

use super::style::{bold, dim};
use crate::index::{IndexProgress, Stage, UpdateReport};

/// Shows [`IndexProgress`] on stderr: a bar with an ETA per stage on a
/// terminal; when stderr is a pipe or a log, a line about every 10 % so
/// long work is visible there too; for scripts, JSON lines ([`Self::events`]);
/// nothing when quiet.
pub struct IndexBar {
    bar: ProgressBar,
    shown: Shown,
    stage: Option<Stage>,
    started: Instant,
    last_decile: Option<usize>,
    last_event: Instant,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shown {
    Bar,
    Lines,
    Events,
    Quiet,
}

/// How often a JSON progress event may repeat within a stage (its first
/// and last are always written).
const EVENT_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

impl IndexBar {
    /// A bar on a terminal, lines in a log; nothing when `quiet`.
    pub fn new(quiet: bool) -> Self {
        if quiet {
            Self::with(Shown::Quiet)
        } else if std::io::stderr().is_terminal() {
            Self::with(Shown::Bar)
        } else {
            Self::with(Shown::Lines)
        }
    }

    /// Progress as JSON lines on stderr, for a script that reads the
    /// report from stdout: `{"event":"progress","stage":..,"done":..,
    /// "total":..,"elapsed_s":..,"rate":..,"eta_s":..}` as each stage
    /// opens, at most twice a second, and as it ends; `{"event":"skipped"}`
    /// and `{"event":"note"}` as they happen.
    pub fn events() -> Self {
        Self::with(Shown::Events)
    }

    /// A line as each stage starts and about every 10 % of it, whatever
    /// stderr is: a server's log.
    pub fn lines() -> Self {
        Self::with(Shown::Lines)
    }

    /// `new(quiet)`, or [`Self::events`] for `--json`.
    pub fn for_json(json: bool) -> Self {
        if json {
            Self::events()
        } else {
            Self::new(false)
        }
    }

    fn with(shown: Shown) -> Self {
        let bar = if shown == Shown::Bar {
            ProgressBar::new(0)
        } else {
            ProgressBar::hidden()
        };
        Self {
            bar,
            shown,
            stage: None,
            started: Instant::now(),
            last_decile: None,
            last_event: Instant::now(),
        }
    }

    /// Feeds one progress event.
    pub fn show(&mut self, p: IndexProgress) {
        match p {
            IndexProgress::Skipped(s) => match self.shown {
                Shown::Quiet => {}
                Shown::Events => eprintln!(
                    "{}",
                    serde_json::json!({"event": "skipped", "path": s.path, "reason": s.reason})
                ),
                _ => self
                    .bar
                    .suspend(|| eprintln!("{}", dim(&format!("skipped {}: {}", s.path, s.reason)))),
            },
            IndexProgress::Stage { stage, done, total } => {
                let what = stage_name(stage);
                let opened = self.stage != Some(stage);
                if opened {
                    self.stage = Some(stage);
                    self.started = Instant::now();
                    self.last_decile = None;
                    self.bar.set_style(
                        ProgressStyle::with_template(&format!(
                            "{{spinner}} {what} {{wide_bar}} {{pos}}/{{len}} · ETA {{eta}}"
                        ))
                        .unwrap_or_else(|_| ProgressStyle::default_bar()),
                    );
                    self.bar.reset();
                }
                self.bar.set_length(total as u64);
                self.bar.set_position(done as u64);
                match self.shown {
                    Shown::Lines => {
                        let decile = (done * 10).checked_div(total).unwrap_or(10);
                        if self.last_decile != Some(decile) {
                            self.last_decile = Some(decile);
                            eprintln!(
                                "indexing: {done}/{total} {what}{}",
                                eta(self.started, done, total)
                            );
                        }
                    }
                    Shown::Events
                        if opened || done >= total || self.last_event.elapsed() >= EVENT_EVERY =>
                    {
                        self.last_event = Instant::now();
                        eprintln!("{}", progress_event(stage, done, total, self.started));
                    }
                    _ => {}
                }
            }
        }
    }

    /// A line above the bar (a note, a non-fatal error).
    pub fn note(&self, text: &str) {
        match self.shown {
            Shown::Quiet => {}
            Shown::Events => eprintln!("{}", serde_json::json!({"event": "note", "message": text})),
            _ => self.bar.suspend(|| eprintln!("{}", dim(text))),
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// What a stage does, for people.
pub fn stage_name(stage: Stage) -> &'static str {
    match stage {
        Stage::Text => "reading files",
        Stage::Vectors => "embedding chunks",
        Stage::States => "caching chunk states",
        Stage::Memory => "loading chunk states into memory",
    }
}

/// What preloading did, for people.
pub fn preloaded_line(r: &crate::workspace::PreloadReport) -> String {
    let mut line = format!("{} chunk states in memory", r.loaded + r.held);
    if r.loaded > 0 {
        line += &format!(" ({:.2} GB read now)", r.bytes as f64 / 1e9);
    }
    if r.full {
        line += "; memory full: the rest are read from disk when asked for";
    }
    line
}

/// One JSON progress line: the stage's count, its pace so far (units a
/// second) and the seconds it has left at that pace (null until a unit is
/// done).
fn progress_event(stage: Stage, done: usize, total: usize, started: Instant) -> serde_json::Value {
    let elapsed = started.elapsed().as_secs_f64();
    let rate = (done > 0 && elapsed > 0.0).then(|| done as f64 / elapsed);
    let eta = rate.map(|r| total.saturating_sub(done) as f64 / r);
    serde_json::json!({
        "event": "progress",
        "stage": stage,
        "done": done,
        "total": total,
        "elapsed_s": (elapsed * 1e3).round() / 1e3,
        "rate": rate.map(|r| (r * 100.0).round() / 100.0),
        "eta_s": eta.map(|e| e.round()),
    })
}

/// ", ETA 3m 20s" from the pace so far (nothing before the first unit).
pub fn eta(started: Instant, done: usize, total: usize) -> String {
    if done == 0 || done >= total {
        return String::new();
    }
    let left = started.elapsed().as_secs_f64() / done as f64 * (total - done) as f64;
    let s = left.round() as u64;
    match s {
        0..=59 => format!(", ETA {s}s"),
        60..=3599 => format!(", ETA {}m {:02}s", s / 60, s % 60),
        _ => format!(", ETA {}h {:02}m", s / 3600, s / 60 % 60),
    }
}

pub fn print_summary(r: &UpdateReport) {
    if r.busy {
        println!(
            "{}",
            dim("another ape-chat process is updating this folder: using the index as it is")
        );
    }
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
    if r.states_deferred > 0 {
        println!(
            "  {} chunk states still to cache: answers encode the ones they need",
            r.states_deferred
        );
    }
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
    for n in &r.files_noted {
        println!("  {}", dim(&format!("note {}: {}", n.path, n.note)));
    }
    if r.cancelled {
        println!("stopped: run the same command again to resume");
    }
}

/// What a folder event means to a command that prints a folder's work.
pub enum Followed {
    /// An index pass finished (with the number of file changes it took in).
    Indexed(Box<UpdateReport>, usize),
    /// A note or a non-fatal error, to show.
    Note(String),
    /// The service ended.
    Stopped,
}

/// Reads a folder service's events for `index` and `watch`: progress drawn
/// on the bar, Ctrl-C passed to the service once as a shutdown (it stops
/// after the unit in flight), a fatal error returned as the command's.
pub struct Follower {
    events: std::sync::mpsc::Receiver<crate::service::FolderEvent>,
    handle: crate::service::Handle,
    asked_to_stop: bool,
}

impl Follower {
    pub fn new(
        events: std::sync::mpsc::Receiver<crate::service::FolderEvent>,
        handle: crate::service::Handle,
    ) -> Self {
        Self {
            events,
            handle,
            asked_to_stop: false,
        }
    }

    /// The next event a printing command acts on.
    pub fn next(&mut self, bar: &mut IndexBar) -> anyhow::Result<Followed> {
        use crate::service::FolderEvent;
        use std::sync::mpsc::RecvTimeoutError;
        loop {
            match self
                .events
                .recv_timeout(std::time::Duration::from_millis(200))
            {
                Ok(FolderEvent::Progress(p)) => bar.show(p),
                Ok(FolderEvent::Indexed { report, changes }) => {
                    return Ok(Followed::Indexed(Box::new(report), changes))
                }
                Ok(FolderEvent::Error {
                    message,
                    fatal: true,
                }) => {
                    bar.finish();
                    anyhow::bail!(message);
                }
                Ok(FolderEvent::Error { message, .. } | FolderEvent::Note(message)) => {
                    return Ok(Followed::Note(message))
                }
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => {
                    if super::CANCEL.load(std::sync::atomic::Ordering::Relaxed)
                        && !self.asked_to_stop
                    {
                        self.asked_to_stop = true;
                        self.handle.shutdown();
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return Ok(Followed::Stopped),
            }
        }
    }
}
