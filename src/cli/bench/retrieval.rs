//! `ape-chat bench retrieval`: SQuAD v2 paragraphs indexed as files (one
//! folder per article); for answerable questions, is the gold paragraph among
//! the top k of hybrid, BM25-only and dense-only retrieval? Also times
//! brute-force cosine search over a synthetic 100k-vector store.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;
use serde::Serialize;

use crate::cli::index::{prepare, FolderArgs};
use crate::cli::style::bold;
use crate::cli::ModelArgs;
use crate::eval::squad;
use crate::index::dense::VectorStore;
use crate::index::manifest::ChunkId;

#[derive(Debug, Args)]
pub struct RetrievalArgs {
    /// SQuAD v2 JSON [default: the file from scripts/setup.sh --eval-data].
    #[arg(long, value_name = "FILE")]
    squad: Option<PathBuf>,
    /// Answerable questions evaluated (spread evenly over the dataset).
    #[arg(long, default_value_t = 200, value_name = "N")]
    questions: usize,
    /// Recall cut-off.
    #[arg(long, default_value_t = 10, value_name = "K")]
    k: usize,
    /// Vectors in the synthetic brute-force search timing (0 skips it).
    #[arg(long, default_value_t = 100_000, value_name = "N")]
    vectors: usize,
    #[command(flatten)]
    pub(super) folder: FolderArgs,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Report {
    questions: usize,
    k: usize,
    paragraphs: usize,
    chunks: usize,
    recall_hybrid: f64,
    recall_bm25: f64,
    recall_dense: f64,
    mrr_hybrid: f64,
    mean_query_ms: f64,
    brute_force_vectors: usize,
    brute_force_search_ms: Option<f64>,
}

pub fn run(model: &ModelArgs, args: &RetrievalArgs) -> anyhow::Result<ExitCode> {
    let path = args
        .squad
        .clone()
        .unwrap_or_else(|| crate::paths::cache_dir().join("data/squad-v2-dev.json"));
    let data = squad::load(&path)?;
    let folder = crate::paths::cache_dir().join("data/squad-v2-dev-folder");
    let mut paragraphs = 0;
    let mut questions = Vec::new();
    for (a, article) in data.data.iter().enumerate() {
        for (p, para) in article.paragraphs.iter().enumerate() {
            let rel = squad::paragraph_path(a, &article.title, p);
            let file = folder.join(&rel);
            if !file.exists() {
                std::fs::create_dir_all(file.parent().unwrap_or(&folder))?;
                crate::fsutil::write_atomic(&file, &[para.context.as_bytes()])?;
            }
            paragraphs += 1;
            questions.extend(
                para.qas
                    .iter()
                    .filter(|q| !q.is_impossible)
                    .map(|q| (q.question.clone(), rel.clone())),
            );
        }
    }
    anyhow::ensure!(
        !questions.is_empty(),
        "no answerable questions in {}",
        path.display()
    );
    let n = args.questions.clamp(1, questions.len());
    let picked: Vec<&(String, String)> = (0..n)
        .map(|i| &questions[i * questions.len() / n])
        .collect();

    let engine = model.load(2048)?;
    let mut p = prepare(&engine, &args.folder, &folder, args.json, false)?;
    let (mut hybrid, mut bm25, mut dense, mut mrr) = (0, 0, 0, 0.0);
    let t = Instant::now();
    for (question, gold) in &picked {
        let path_of = |id: ChunkId| p.index.chunk(id).map(|c| c.path.clone());
        let hits = p.index.search(&mut p.embedder, question, args.k)?;
        if let Some(rank) = hits.iter().position(|(_, c)| &c.path == gold) {
            hybrid += 1;
            mrr += 1.0 / (rank + 1) as f64;
        }
        let (lexical, semantic) = p.index.rankings(&mut p.embedder, question, args.k)?;
        bm25 += usize::from(lexical.iter().any(|&id| path_of(id).as_ref() == Some(gold)));
        dense += usize::from(
            semantic
                .iter()
                .any(|&id| path_of(id).as_ref() == Some(gold)),
        );
    }
    let per_query = t.elapsed().as_secs_f64() * 1e3 / n as f64;
    let report = Report {
        questions: n,
        k: args.k,
        paragraphs,
        chunks: p.index.len(),
        recall_hybrid: hybrid as f64 / n as f64,
        recall_bm25: bm25 as f64 / n as f64,
        recall_dense: dense as f64 / n as f64,
        mrr_hybrid: mrr / n as f64,
        mean_query_ms: per_query,
        brute_force_vectors: args.vectors,
        brute_force_search_ms: (args.vectors > 0).then(|| brute_force_ms(args.vectors)),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("{}", bold("ape-chat bench retrieval"));
        println!(
            "  SQuAD v2 dev: {} paragraphs as files → {} chunks · {} answerable questions",
            report.paragraphs, report.chunks, n
        );
        println!(
            "  recall@{}  hybrid {:.3}  ·  BM25 {:.3}  ·  dense {:.3}",
            args.k, report.recall_hybrid, report.recall_bm25, report.recall_dense
        );
        println!(
            "  hybrid MRR@{} {:.3} · {:.1} ms per query (all three rankings)",
            args.k, report.mrr_hybrid, per_query
        );
        if let Some(ms) = report.brute_force_search_ms {
            println!(
                "  brute-force cosine top-50 over {} 384-d vectors: {:.1} ms",
                args.vectors, ms
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Median time of a top-50 search over `n` pseudo-random unit vectors.
fn brute_force_ms(n: usize) -> f64 {
    let dir = std::env::temp_dir().join(format!("ape-chat-vec-{}", std::process::id()));
    let mut store = VectorStore::load(&dir.join("v.bin"));
    let mut s = 0x9E37_79B9u32;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s as f32 / u32::MAX as f32 - 0.5
    };
    for id in 0..n as u64 {
        let v: Vec<f32> = (0..384).map(|_| next()).collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        store.insert(id, v.iter().map(|x| x / norm).collect());
    }
    let q: Vec<f32> = (0..384).map(|_| next()).collect();
    let mut times: Vec<f64> = (0..15)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(store.search(&q, 50));
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}
