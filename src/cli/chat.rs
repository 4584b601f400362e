//! `ape-chat [DIR]`: the interactive UI over the folder service. The UI
//! thread never touches the engine: the service (its own thread) owns the
//! model, the folder and the watcher; its events become the UI's messages.
//! Chat history persists per folder.

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::time::Instant;

use super::output::{eta, preloaded_line, stage_name};
use super::{AskArgs, FolderArgs, ModelArgs};
use crate::compute::Budget;
use crate::engine::Mode;
use crate::index::{IndexProgress, Stage};
use crate::service::{AnswerEvent, FolderEvent, Handle, Question, Service, ServiceOptions, Until};
use crate::tui::{self, Effect, Model, Msg, SourceView, Status, Turn};
use crate::workspace::context_size;

pub fn run(
    model: &ModelArgs,
    ask_args: &AskArgs,
    folder: &FolderArgs,
    dir: &Path,
) -> anyhow::Result<ExitCode> {
    let dir = dir
        .canonicalize()
        .map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
    // No attention shares: they point at the answer's source no better than
    // retrieval's order, which the pane already shows (docs/results.md, Attribution).
    let options = ask_args.options(false)?;
    let setting = ask_args.setting_label();
    let history = crate::paths::chat_history(&dir);
    let turns: Vec<Turn> = std::fs::read(&history)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let status = Status {
        model: model
            .path()
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        mode: status_mode(&setting, &options.mode),
        ..Status::default()
    };

    let (tx, rx) = mpsc::channel();
    let service = Service::new(
        ServiceOptions {
            ask: options.clone(),
            with_states: true,
            watch: Some(std::time::Duration::from_millis(1500)),
            until: Until::Shutdown,
            preload: true,
            queue: 1,
        },
        Budget::default(),
    );
    let handle = service.handle();
    let (events_tx, events_rx) = mpsc::channel();
    let ctx = context_size(
        options.top_k,
        folder.chunk_tokens(),
        options.generate.max_tokens,
    );
    super::start_service(model, ctx, &dir, folder, service, events_tx)?;
    let folder_tx = tx.clone();
    std::thread::spawn(move || folder_events(events_rx, folder_tx));
    tx.send(Msg::Activity("loading model…".into()))?;

    let save = |turns: &[Turn]| {
        if let Ok(json) = serde_json::to_vec(turns) {
            let _ = crate::fsutil::write_atomic(&history, &[&json]);
        }
    };
    let mut asking: Option<Arc<AtomicBool>> = None;
    let end = tui::run(
        Model::new(turns, status),
        &dir,
        tx.clone(),
        rx,
        |m, effect| match effect {
            Effect::Ask {
                question,
                history,
                files,
            } => {
                asking = ask(&handle, question, history, files, &setting, &tx);
            }
            Effect::Cancel => {
                if let Some(c) = &asking {
                    c.store(true, Ordering::SeqCst);
                }
            }
            Effect::Save => save(&m.turns),
            Effect::Quit | Effect::Open(_) | Effect::Copy(_) => {}
        },
    )?;
    save(&end.turns);
    handle.shutdown();
    Ok(ExitCode::SUCCESS)
}

/// Hands a question to the service; its answer's events become messages
/// on a thread of their own. Returns the question's stop switch.
fn ask(
    handle: &Handle,
    text: String,
    history: Vec<crate::answer::Exchange>,
    files: Vec<String>,
    setting: &str,
    tx: &Sender<Msg>,
) -> Option<Arc<AtomicBool>> {
    let question = Question {
        text,
        history,
        options: None,
        files,
    };
    let ticket = match handle.ask(question) {
        Ok(t) => t,
        Err(e) => {
            let _ = tx.send(Msg::Failed(e.to_string()));
            return None;
        }
    };
    let cancel = Arc::clone(&ticket.cancel);
    let tx = tx.clone();
    let setting = setting.to_string();
    std::thread::spawn(move || {
        for event in ticket.events {
            let msg = match event {
                AnswerEvent::Started { .. } => continue,
                AnswerEvent::Token { text, .. } if text.is_empty() => continue,
                AnswerEvent::Token { text, .. } => Msg::Token(text),
                AnswerEvent::Failed(e) => Msg::Failed(e.message),
                AnswerEvent::Answered(done) => {
                    let a = &done.answer;
                    if !a.notes.is_empty() {
                        let _ = tx.send(Msg::Activity(format!("note: {}", a.notes.join("; "))));
                    } else if a.states.from_store > 0 {
                        let r = &a.states;
                        let _ = tx.send(Msg::Activity(format!(
                            "{} states from the shared store ({:.1} MB in {:.0} ms)",
                            r.from_store,
                            r.store_bytes as f64 / 1e6,
                            r.store_ms
                        )));
                    }
                    let sources = a
                        .sources
                        .iter()
                        .zip(&done.texts)
                        .map(|(s, text)| SourceView {
                            path: s.chunk.path.clone(),
                            lines: s.chunk.lines,
                            heading: s.chunk.heading.join(" › "),
                            preview: text.clone(),
                            place: s.chunk.place.as_ref().map(ToString::to_string),
                            editable: s.chunk.place.is_none()
                                && crate::ingest::extract::lines_are_the_files(Path::new(
                                    &s.chunk.path,
                                )),
                        })
                        .collect();
                    Msg::Answered {
                        sources,
                        mode: status_mode(&setting, &a.mode),
                        ttft_ms: a.ttft.as_secs_f64() * 1e3,
                        tokens_per_s: a.generated.decode_tokens_per_s(),
                    }
                }
            };
            if tx.send(msg).is_err() {
                break;
            }
        }
    });
    Some(cancel)
}

/// The folder's events as status-bar messages, each background stage with
/// its pace and an ETA.
fn folder_events(events: Receiver<FolderEvent>, tx: Sender<Msg>) {
    let mut stage: Option<(Stage, Instant)> = None;
    for e in events {
        let msg = match e {
            FolderEvent::Loaded { .. } => Msg::Activity("reading files…".into()),
            FolderEvent::TextReady {
                report,
                files,
                chunks,
            } => {
                let _ = tx.send(Msg::Index { files, chunks });
                let skipped: Vec<(String, String)> = report
                    .files_skipped
                    .iter()
                    .map(|s| (s.path.clone(), s.reason.clone()))
                    .collect();
                let unread = match skipped.len() {
                    0 => String::new(),
                    n => format!(" · {n} not readable (? lists them)"),
                };
                let _ = tx.send(Msg::Skipped(skipped));
                Msg::Activity(if report.files_indexed + report.files_removed > 0 {
                    format!(
                        "answers ready · {} files read, {} removed{unread}",
                        report.files_indexed, report.files_removed
                    )
                } else {
                    format!("answers ready{unread}")
                })
            }
            FolderEvent::Progress(IndexProgress::Stage {
                stage: s,
                done,
                total,
            }) => {
                let started = match stage {
                    Some((current, t)) if current == s && done > 1 => t,
                    _ => Instant::now(),
                };
                stage = Some((s, started));
                let ready = if s == Stage::Text {
                    ""
                } else {
                    "answers ready · "
                };
                Msg::Activity(format!(
                    "{ready}{} {done}/{total}{}",
                    stage_name(s),
                    eta(started, done, total)
                ))
            }
            FolderEvent::Progress(IndexProgress::Skipped(_)) => continue,
            FolderEvent::Indexed { report, .. } if report.states_deferred == 0 => {
                Msg::Activity("ready · every chunk state cached".into())
            }
            FolderEvent::Indexed { .. } => Msg::Activity("ready".into()),
            FolderEvent::Preloaded(r) => Msg::Activity(format!("ready · {}", preloaded_line(&r))),
            FolderEvent::Note(n) => Msg::Activity(n),
            FolderEvent::Error { message, .. } => Msg::Activity(format!("error: {message}")),
        };
        if tx.send(msg).is_err() {
            break;
        }
    }
}

/// The status bar's name for how answers are made: the setting, and the
/// shape of its re-read (`balanced` re-reads a window, or the whole chunk
/// on a GPU and over `@path` files). Short: the bar also carries the
/// model, the folder and what is under way.
fn status_mode(setting: &str, mode: &Mode) -> String {
    match mode {
        Mode::Ape(p) if p.reread > 0 && p.window > 0 => format!(
            "{setting} ({}-token {}{})",
            p.window,
            if p.echo { "echo" } else { "re-read" },
            if p.sentences { ", sentences" } else { "" }
        ),
        Mode::Ape(p) if p.reread > 0 && p.echo => format!("{setting} (whole echo)"),
        Mode::Ape(p) if p.reread > 0 => format!("{setting} (whole re-read)"),
        _ => setting.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ApeParams;

    #[test]
    fn the_status_bar_names_the_re_reads_shape() {
        let ape = |reread, window, sentences| {
            Mode::Ape(ApeParams {
                reread,
                window,
                sentences,
                ..ApeParams::DEFAULT
            })
        };
        let shown = |m: &Mode| status_mode("balanced", m);
        assert_eq!(
            shown(&ape(1, 48, true)),
            "balanced (48-token re-read, sentences)"
        );
        assert_eq!(shown(&ape(1, 32, false)), "balanced (32-token re-read)");
        assert_eq!(shown(&ape(1, 0, false)), "balanced (whole re-read)");
        let echo = |window| {
            Mode::Ape(ApeParams {
                reread: 1,
                window,
                sentences: true,
                echo: true,
                ..ApeParams::DEFAULT
            })
        };
        assert_eq!(shown(&echo(48)), "balanced (48-token echo, sentences)");
        assert_eq!(shown(&echo(0)), "balanced (whole echo)");
        assert_eq!(shown(&ape(0, 48, true)), "balanced", "no re-read");
        assert_eq!(status_mode("exact", &Mode::Sequential), "exact");
    }
}
