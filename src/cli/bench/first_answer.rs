//! `ape-chat bench first-answer DIR`: flags → [`crate::bench::first_answer`]
//! → report.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::bench::first_answer::{first_answer, AnswerFigures, FirstAnswerOptions};
use crate::bench::ratio;
use crate::cli::style::{bold, dim};
use crate::cli::{AskArgs, FolderArgs, ModelArgs};
use crate::workspace::context_size;

#[derive(Debug, Args)]
pub struct FirstAnswerArgs {
    /// The folder (copied to a scratch place: a fresh index and cache).
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// The first question.
    #[arg(long, value_name = "TEXT")]
    question: String,
    /// The second question, asked while background indexing has work left
    /// (the first is also asked again while a state is being encoded).
    #[arg(long, value_name = "TEXT")]
    second: String,
    /// Seconds of background indexing between the two questions.
    #[arg(long, default_value_t = 20, value_name = "S")]
    background_s: u64,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pub(super) folder: FolderArgs,
    #[command(flatten)]
    pub(super) answer: AskArgs,
}

pub fn run(model: &ModelArgs, args: &FirstAnswerArgs) -> anyhow::Result<ExitCode> {
    let ask = args.answer.options(false)?;
    let engine = model.engine_options(context_size(
        ask.top_k,
        args.folder.chunk_tokens(),
        ask.generate.max_tokens,
    ));
    let o = FirstAnswerOptions {
        folder: args.dir.clone(),
        model: model.path(),
        engine,
        folder_options: args.folder.options(),
        ask: ask.clone(),
        questions: [args.question.clone(), args.second.clone()],
        background: Duration::from_secs(args.background_s),
    };
    let json = args.json;
    let r = first_answer(&o, &mut |m| {
        if !json {
            eprintln!("{}", dim(m));
        }
    })?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}", bold("ape-chat bench first-answer"));
    println!(
        "  {} files · {} chunks · {} tokens · {}",
        r.files, r.chunks, r.tokens, ask.mode
    );
    println!("  model loaded after {:.1} s", r.model_load_ms / 1e3);
    println!(
        "  BM25 ready after   {:.1} s (answers possible)",
        r.text_ready_ms / 1e3
    );
    let line = |what: &str, a: &AnswerFigures| {
        println!(
            "  {what:<34} first token after {:>6.1} s from launch ({:>6.1} s from the question), {} states encoded, {:.1} tok/s",
            a.first_token_from_launch_ms / 1e3,
            a.first_token_ms / 1e3,
            a.states_encoded,
            a.decode_tokens_per_s
        )
    };
    line("first question", &r.first);
    line("same question, states cached", &r.again);
    let d = &r.during_encoding;
    line("first question, idle, vectors done", &d.idle);
    println!(
        "  {:<34} first token after {:>6.1} s from the question (background gave way after {:.0} ms), {:.1} tok/s: {:.2}× the idle TTFT, {:.2}× its decode",
        "same, typed while a state encodes",
        d.answer.first_token_ms / 1e3,
        d.waited_ms,
        d.answer.decode_tokens_per_s,
        ratio(d.answer.first_token_ms, d.idle.first_token_ms),
        ratio(d.answer.decode_tokens_per_s, d.idle.decode_tokens_per_s),
    );
    line(
        &format!("second, {} states still to do", r.states_left),
        &r.second,
    );
    println!(
        "  ({} background units between the questions)",
        r.background_units
    );
    Ok(ExitCode::SUCCESS)
}
