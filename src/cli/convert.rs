//! `ape-chat convert --from squad` (alias `convert-squad`): evaluation
//! records from a dataset (one question each, or pairs whose answer needs
//! two paragraphs), the articles split between evaluation and calibration
//! so the two never share a paragraph.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use crate::eval::datasets::{self, squad};

#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The dataset to convert.
    #[arg(long, value_enum, default_value = "squad")]
    from: Source,
    /// SQuAD v2 JSON [default: the file from scripts/setup.sh --eval-data].
    #[arg(long, value_name = "FILE")]
    squad: Option<PathBuf>,
    /// Output JSON Lines file.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Contexts per record: the question's paragraph (a pair's two) plus
    /// others from its article.
    #[arg(long, default_value_t = 10, value_name = "K")]
    contexts: usize,
    /// Also keep unanswerable questions.
    #[arg(long, conflicts_with = "pairs")]
    unanswerable: bool,
    /// Ask two questions of one article at once, their answers in different
    /// paragraphs: records whose answer needs two contexts (it counts as
    /// contained only with both parts).
    #[arg(long)]
    pairs: bool,
    /// Seed for distractor choice and order.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Keep N records, spread evenly over the dataset.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Leave out the questions of this dataset (so a calibration set and an
    /// evaluation set never share a question).
    #[arg(long, value_name = "FILE")]
    exclude: Option<PathBuf>,
    /// Which articles to draw on: every fourth is kept for calibration, the
    /// rest for evaluation, so the two sets never share a paragraph.
    #[arg(long, value_enum, default_value = "all")]
    articles: ArticlesArg,
    /// Order the records round-robin over their articles, so that any first
    /// N (`eval --limit N`, or a run stopped early) span many articles.
    #[arg(long)]
    interleave: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Source {
    /// SQuAD v2 (`scripts/setup.sh --eval-data`).
    Squad,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ArticlesArg {
    All,
    Evaluation,
    Calibration,
}

pub fn run(args: &ConvertArgs) -> anyhow::Result<ExitCode> {
    let Source::Squad = args.from;
    let path = args.squad.clone().unwrap_or_else(crate::paths::squad_file);
    let squad = squad::load(&path)?;
    let articles = match args.articles {
        ArticlesArg::All => squad::Articles::All,
        ArticlesArg::Evaluation => squad::Articles::Evaluation,
        ArticlesArg::Calibration => squad::Articles::Calibration,
    };
    let mut records = if args.pairs {
        squad::to_pair_records(&squad, args.contexts.max(2), args.seed, articles)
    } else {
        squad::to_records(
            &squad,
            args.contexts.max(1),
            args.unanswerable,
            args.seed,
            articles,
        )
    };
    if let Some(path) = &args.exclude {
        records = datasets::without_questions_of(records, &datasets::load(path)?);
    }
    let mut records = datasets::spread(records, args.limit);
    if args.interleave {
        records = datasets::interleave(records);
    }
    datasets::save(&args.out, &records)?;
    eprintln!("wrote {} records to {}", records.len(), args.out.display());
    Ok(ExitCode::SUCCESS)
}
