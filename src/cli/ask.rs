//! `ape-chat --ask QUESTION DIR`: one question, streamed answer, sources.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde_json::json;

use std::sync::atomic::Ordering;

use super::index::{prepare, FolderArgs};
use super::style::{bold, dim};
use super::{ApeArgs, ModelArgs, CANCEL};
use crate::answer::Quality;
use crate::answer::{ask, Answer, AskOptions};
use crate::config::FileConfig;
use crate::engine::ape::decimal;
use crate::engine::{GenerateOptions, Mode, Sampling};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum QualityArg {
    Fast,
    Balanced,
    Exact,
}

impl From<QualityArg> for Quality {
    fn from(q: QualityArg) -> Self {
        match q {
            QualityArg::Fast => Quality::Fast,
            QualityArg::Balanced => Quality::Balanced,
            QualityArg::Exact => Quality::Exact,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ModeArg {
    Ape,
    Parallel,
    Pcw,
    Sequential,
}

impl AskArgs {
    /// Retrieval, mode and decoding settings for answering.
    pub fn options(&self, attribution: bool) -> anyhow::Result<AskOptions> {
        let top_k = self.top_k.unwrap_or(5);
        anyhow::ensure!(top_k > 0, "--top-k must be at least 1");
        let ape = self.ape.params()?;
        let quality = self.quality();
        let mode = match self.mode {
            Some(ModeArg::Ape) => Mode::Ape(ape),
            Some(ModeArg::Parallel) => Mode::Parallel,
            Some(ModeArg::Pcw) => Mode::Pcw,
            Some(ModeArg::Sequential) => Mode::Sequential,
            None => quality.mode(ape, self.ape.reread_set()),
        };
        let sampling = if self.temperature > 0.0 {
            Sampling::Sample {
                temperature: self.temperature,
                top_p: 0.95,
                seed: self.seed,
            }
        } else {
            Sampling::Greedy
        };
        Ok(AskOptions {
            top_k,
            mode,
            generate: GenerateOptions {
                max_tokens: self.max_tokens,
                sampling,
                attribution,
            },
        })
    }

    /// The quality setting in effect.
    pub fn quality(&self) -> Quality {
        self.quality.map(Quality::from).unwrap_or_default()
    }

    /// What the status line calls the setting: the quality, or the mode
    /// when one was named.
    pub fn setting_label(&self) -> String {
        match self.mode {
            Some(m) => format!("{m:?}").to_lowercase(),
            None => self.quality().name().to_string(),
        }
    }

    /// Fills what flags and env left unset from the config file.
    pub fn apply(&mut self, c: &FileConfig) {
        self.top_k = self.top_k.or(c.top_k);
        if self.quality.is_none() {
            self.quality = c.quality.map(|q| match q {
                Quality::Fast => QualityArg::Fast,
                Quality::Balanced => QualityArg::Balanced,
                Quality::Exact => QualityArg::Exact,
            });
        }
        self.ape.apply(c);
    }
}

#[derive(Debug, Clone, Args)]
pub struct AskArgs {
    /// Speed against faithfulness to sequential prefill: `fast` (APE),
    /// `balanced` (APE, and the best chunk re-read before the question),
    /// `exact` (sequential prefill) [default: balanced].
    #[arg(long, env = "APE_CHAT_QUALITY", value_enum)]
    quality: Option<QualityArg>,
    /// How retrieved chunks reach the model, overriding --quality.
    #[arg(long, value_enum)]
    mode: Option<ModeArg>,
    #[command(flatten)]
    ape: ApeArgs,
    /// Chunks retrieved per question [default: 5].
    #[arg(long, env = "APE_CHAT_TOP_K", value_name = "K")]
    top_k: Option<usize>,
    /// Longest answer, in tokens.
    #[arg(long, default_value_t = 256, value_name = "N")]
    max_tokens: usize,
    /// Sampling temperature; 0 picks the most likely token (deterministic).
    #[arg(long, default_value_t = 0.0, value_name = "X")]
    temperature: f32,
    /// Seed for sampling.
    #[arg(long, default_value_t = 42)]
    seed: u32,
    /// Print the answer only when complete.
    #[arg(long)]
    no_stream: bool,
    /// JSON Lines on stdout: `token`, `answer`, `sources`, `stats` records.
    #[arg(long)]
    json: bool,
}

pub fn run(
    model: &ModelArgs,
    args: &AskArgs,
    folder: &FolderArgs,
    question: &str,
    dir: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let question = read_question(question)?;
    let Some(dir) = dir else {
        anyhow::bail!("give the folder to answer from: ape-chat --ask QUESTION DIR");
    };
    let options = args.options(true)?;
    let top_k = options.top_k;
    let ctx = 1024 + top_k * (folder.chunk_tokens() * 3 / 2 + 64) + args.max_tokens;
    let engine = model.load(ctx.next_multiple_of(256) as u32)?;
    let mut p = prepare(&engine, folder, &dir, args.json, true)?;
    anyhow::ensure!(
        !p.index.is_empty(),
        "no readable text files in {}",
        dir.display()
    );

    let mut out = std::io::stdout().lock();
    let mut write_err: Option<std::io::Error> = None;
    let stream = !args.no_stream;
    let mut on_text = |piece: &str| {
        let r = if args.json && stream {
            writeln!(out, "{}", json!({"type": "token", "text": piece}))
        } else if stream {
            write!(out, "{piece}").and_then(|_| out.flush())
        } else {
            Ok(())
        };
        r.map_err(|e| write_err = Some(e)).is_ok() && !CANCEL.load(Ordering::Relaxed)
    };
    let answer = ask(
        &p.states,
        &p.index,
        &mut p.embedder,
        &question,
        &options,
        &mut on_text,
    )?;
    if let Some(e) = write_err {
        return Err(e.into());
    }
    drop(out);
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

fn print_human(a: &Answer, streamed: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if !streamed {
        write!(out, "{}", a.generated.text)?;
    }
    writeln!(out, "\n")?;
    writeln!(out, "{}", bold("Sources"))?;
    for (i, s) in a.sources.iter().enumerate() {
        let c = &s.chunk;
        let heading = if c.heading.is_empty() {
            String::new()
        } else {
            format!(" › {}", c.heading.join(" › "))
        };
        let place = match c.pages {
            Some((a, b)) if a == b => format!("p. {a}"),
            Some((a, b)) => format!("pp. {a}-{b}"),
            None => format!("{}-{}", c.lines.0, c.lines.1),
        };
        let sep = if c.pages.is_some() { " " } else { ":" };
        let share = s.attention_share.map_or(String::new(), |x| {
            format!("  {:>3.0}% of attention", x * 100.0)
        });
        writeln!(
            out,
            "  {}. {}{sep}{place}{}{}",
            i + 1,
            c.path,
            dim(&heading),
            bold(&share)
        )?;
    }
    let g = &a.generated;
    if std::io::stderr().is_terminal() {
        eprintln!(
            "{}",
            dim(&format!(
                "{} · TTFT {:.0} ms (state load {:.0} ms, question prefill {:.0} ms) · {:.1} tok/s",
                a.mode,
                g.ttft.as_secs_f64() * 1e3,
                g.prefill.load.as_secs_f64() * 1e3,
                g.prefill.prefill.as_secs_f64() * 1e3,
                g.decode_tokens_per_s()
            ))
        );
    }
    Ok(())
}

fn print_json(a: &Answer) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let g = &a.generated;
    let (t, s, reread, focus) = match a.mode {
        Mode::Ape(p) => (
            Some(decimal(p.temperature)),
            Some(decimal(p.scale)),
            Some(p.reread),
            Some(p.focus),
        ),
        _ => (None, None, None, None),
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
                "heading": s.chunk.heading, "pages": s.chunk.pages, "rank": i + 1,
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
            "reread": reread, "focus": focus,
            "retrieval_ms": ms(a.retrieval), "state_prep_ms": ms(a.state_prep),
            "state_load_ms": ms(g.prefill.load), "question_prefill_ms": ms(g.prefill.prefill),
            "ttft_ms": ms(g.ttft), "decode_tokens_per_s": g.decode_tokens_per_s(),
            "answer_tokens": g.tokens.len(),
            "chunks_encoded": a.encoded, "cache_rejected": a.rejected,
        })
    )?;
    Ok(())
}
