//! `ape-chat --ask QUESTION DIR`: one question, streamed answer, sources.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use serde_json::json;

use super::output::IndexBar;
use super::style::{bold, dim};
use super::{AskArgs, FolderArgs, ModelArgs, CANCEL};
use crate::answer::{Answer, Exchange};
use crate::engine::{Mode, Piece, StopReason};
use crate::ingest::Place;
use crate::numfmt::decimal;
use crate::workspace::{context_size, Workspace};

/// The flags only a one-shot question has (the TUI and `serve` have their
/// own ways to stream, to print and to hold a conversation).
#[derive(Debug, Clone, clap::Args)]
pub struct AskOutput {
    /// With --ask: print the answer only when complete.
    #[arg(long, requires = "question")]
    no_stream: bool,
    /// With --ask: JSON Lines on stdout: `token`, `answer`, `sources`,
    /// `stats` records.
    #[arg(long, requires = "question")]
    json: bool,
    /// With --ask: continue the conversation in FILE (JSON: the earlier
    /// turns as [{"question", "answer"}…] or chat messages), and add this
    /// turn to it. A missing file starts a new conversation.
    #[arg(long, value_name = "FILE", requires = "question")]
    conversation: Option<PathBuf>,
}

pub fn run(
    model: &ModelArgs,
    answer_args: &AskArgs,
    args: &AskOutput,
    folder: &FolderArgs,
    question: &str,
    dir: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let question = read_question(question)?;
    let Some(dir) = dir else {
        anyhow::bail!("give the folder to answer from: ape-chat --ask QUESTION DIR");
    };
    // Attention shares for scripts only (`--json`): they point at the
    // answer's source no better than retrieval's order, which the sources
    // list already is (docs/results.md, Attribution), and measuring them slows
    // decoding.
    let options = answer_args.options(args.json)?;
    let history = match &args.conversation {
        Some(path) => crate::conversation::load(path)?,
        None => Vec::new(),
    };
    let engine = model.load(context_size(
        options.top_k,
        folder.chunk_tokens(),
        answer_args.max_tokens,
    ))?;
    let mut ws = Workspace::open(&engine, &dir, &folder.options(), folder.store()?)?;
    // Only the text stage: retrieval works from BM25 at once, and the
    // states this question needs are encoded now (the rest can wait).
    let mut bar = IndexBar::new(args.json);
    let report = ws.refresh_text(&CANCEL, &mut |p| bar.show(p))?;
    bar.finish();
    if report.busy && !args.json {
        eprintln!(
            "{}",
            dim("another ape-chat process is updating this folder: using the index as it is")
        );
    }
    anyhow::ensure!(
        !ws.index.is_empty(),
        "no readable text files in {}",
        dir.display()
    );

    let mut out = std::io::stdout().lock();
    let mut write_err: Option<std::io::Error> = None;
    let stream = !args.no_stream;
    let mut on_text = |piece: &Piece<'_>| {
        let piece = piece.text;
        let r = if piece.is_empty() {
            Ok(())
        } else if args.json && stream {
            writeln!(out, "{}", json!({"type": "token", "text": piece}))
        } else if stream {
            write!(out, "{piece}").and_then(|_| out.flush())
        } else {
            Ok(())
        };
        r.map_err(|e| write_err = Some(e)).is_ok() && !CANCEL.load(Ordering::Relaxed)
    };
    let answer = ws.ask(&question, &history, &options, &mut on_text)?;
    if let Some(e) = write_err {
        return Err(e.into());
    }
    drop(out);
    if let Some(path) = &args.conversation {
        let why_not = if answer.generated.stop == StopReason::Cancelled {
            Some("the answer was stopped")
        } else if answer.generated.text.trim().is_empty() {
            Some("the answer is empty")
        } else {
            None
        };
        match why_not {
            Some(why) => eprintln!(
                "{}",
                dim(&format!("{why}: the conversation file is left as it was"))
            ),
            None => crate::conversation::append(
                path,
                Exchange {
                    question: question.clone(),
                    answer: answer.generated.text.clone(),
                },
            )?,
        }
    }
    if args.json {
        print_json(&answer)?;
    } else {
        print_human(&answer, stream)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn read_question(q: &str) -> anyhow::Result<String> {
    let q = if q == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s)?;
        s
    } else {
        q.to_string()
    };
    let q = q.trim().to_string();
    anyhow::ensure!(!q.is_empty(), "the question is empty");
    Ok(q)
}

/// Sources listed in the human output, best first (an answer over a whole
/// folder reads hundreds).
const SOURCES_SHOWN: usize = 10;

fn print_human(a: &Answer, streamed: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if !streamed {
        write!(out, "{}", a.generated.text)?;
    }
    writeln!(out, "\n")?;
    writeln!(out, "{}", bold("Sources"))?;
    for (i, s) in a.sources.iter().take(SOURCES_SHOWN).enumerate() {
        let c = &s.chunk;
        let heading = if c.heading.is_empty() {
            String::new()
        } else {
            format!(" › {}", c.heading.join(" › "))
        };
        let (sep, place) = match &c.place {
            Some(p) => (" ", p.to_string()),
            None => (":", format!("{}-{}", c.lines.0, c.lines.1)),
        };
        writeln!(out, "  {}. {}{sep}{place}{}", i + 1, c.path, dim(&heading))?;
    }
    if a.sources.len() > SOURCES_SHOWN {
        writeln!(
            out,
            "  {}",
            dim(&format!(
                "… and {} more ({} chunks, {} tokens read; --json lists every one)",
                a.sources.len() - SOURCES_SHOWN,
                a.sources.len(),
                a.prompt_tokens
            ))
        )?;
    }
    let g = &a.generated;
    for note in &a.notes {
        eprintln!("{} {note}", bold("note:"));
    }
    if std::io::stderr().is_terminal() {
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        eprintln!(
            "{}",
            dim(&format!(
                "{} · TTFT {:.0} ms (retrieval {:.0} ms, states {:.0} ms{}, placement {:.0} ms, prefill {:.0} ms) · {:.1} tok/s",
                a.mode,
                ms(a.ttft),
                ms(a.retrieval),
                ms(a.state_prep),
                state_sources(&a.states),
                ms(g.prefill.load),
                ms(g.prefill.prefill),
                g.decode_tokens_per_s()
            ))
        );
    }
    Ok(())
}

/// Where the states came from, for the timing line: ", 3 in memory, 2 from
/// disk, 1 encoded now" (the parts that are not zero).
fn state_sources(r: &crate::states::StateReads) -> String {
    [
        (r.from_memory, "in memory"),
        (r.from_disk, "from disk"),
        (r.computed(), "encoded now"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!(", {n} {what}"))
    .collect()
}

/// A source's place for `--json`: its fields, and `text` as printed.
fn location_json(p: &Place) -> serde_json::Value {
    let mut v = serde_json::to_value(p).unwrap_or_default();
    v["text"] = p.to_string().into();
    v
}

fn print_json(a: &Answer) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let g = &a.generated;
    let (t, s, reread, window, sentences, echo, focus) = match a.mode {
        Mode::Ape(p) => (
            Some(decimal(p.temperature)),
            Some(decimal(p.scale)),
            Some(p.reread),
            Some(p.window),
            Some(p.sentences),
            Some(p.echo),
            Some(p.focus),
        ),
        _ => (None, None, None, None, None, None, None),
    };
    writeln!(
        out,
        "{}",
        json!({"type": "answer", "text": g.text, "stop": g.stop})
    )?;
    let sources: Vec<_> = a
        .sources
        .iter()
        .enumerate()
        .map(|(i, s)| {
            json!({
                "path": s.chunk.path, "lines": [s.chunk.lines.0, s.chunk.lines.1],
                "heading": s.chunk.heading, "rank": i + 1,
                "pages": s.chunk.place.as_ref().and_then(Place::page_range),
                "location": s.chunk.place.as_ref().map(location_json),
                "attention_share": s.attention_share, "bm25_rank": s.hit.bm25_rank,
                "dense_rank": s.hit.dense_rank, "score": s.hit.score,
            })
        })
        .collect();
    writeln!(out, "{}", json!({"type": "sources", "sources": sources}))?;
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    writeln!(
        out,
        "{}",
        json!({
            "type": "stats", "mode": a.mode.name(), "temperature_ape": t, "scale_ape": s,
            "reread": reread, "reread_window": window, "reread_sentences": sentences,
            "reread_echo": echo,
            "focus": focus, "doubt": match a.mode { Mode::Ape(p) => p.doubt, _ => None },
            "doubted": a.doubted,
            "retrieval_ms": ms(a.retrieval), "state_prep_ms": ms(a.state_prep),
            "state_load_ms": ms(g.prefill.load), "question_prefill_ms": ms(g.prefill.prefill),
            "ttft_ms": ms(a.ttft), "prefill_to_first_token_ms": ms(g.ttft),
            "decode_tokens_per_s": g.decode_tokens_per_s(), "notes": a.notes,
            "answer_tokens": g.tokens.len(), "chunks_read": a.sources.len(),
            "context_tokens": a.prompt_tokens, "max_position": a.max_position,
            "window": a.window,
            "chunks_encoded": a.states.computed(), "states_encoded_on_demand": a.states.computed(),
            "cache_rejected": a.states.rebuilt, "cache_unreadable": a.states.unreadable, "states_from_memory": a.states.from_memory,
            "states_from_disk": a.states.from_disk, "state_disk_bytes": a.states.disk_bytes,
            "states_encoded": a.states.computed(), "states_from_store": a.states.from_store,
            "state_store_bytes": a.states.store_bytes, "state_store_ms": a.states.store_ms,
        })
    )?;
    Ok(())
}
