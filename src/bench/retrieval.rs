//! Retrieval quality on SQuAD v2 (`ape-chat bench retrieval`): paragraphs
//! indexed as files (one folder per article); for answerable questions, is
//! the gold paragraph among the top k of hybrid, BM25-only and dense-only
//! retrieval? Also times brute-force cosine search over a synthetic store.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use super::BenchError;
use crate::engine::Engine;
use crate::eval::datasets::squad;
use crate::index::dense::VectorStore;
use crate::index::manifest::ChunkId;
use crate::index::Retrieval;
use crate::kvstore::KvStore;
use crate::workspace::{FolderOptions, Workspace};

/// The figures.
#[derive(Clone, Debug, Serialize)]
pub struct RetrievalReport {
    pub questions: usize,
    pub k: usize,
    pub paragraphs: usize,
    pub chunks: usize,
    pub recall_hybrid: f64,
    pub recall_bm25: f64,
    pub recall_dense: f64,
    pub mrr_hybrid: f64,
    pub mean_query_ms: f64,
    pub brute_force_vectors: usize,
    pub brute_force_search_ms: Option<f64>,
}

/// Indexes SQuAD at `squad_file` as a folder (text and vectors, no states)
/// and scores `questions` answerable questions spread over it.
pub fn retrieval(
    engine: &Engine,
    squad_file: &Path,
    folder: &FolderOptions,
    questions: usize,
    k: usize,
    vectors: usize,
) -> Result<RetrievalReport, BenchError> {
    let data = squad::load(squad_file).map_err(|e| BenchError::Setup(e.to_string()))?;
    let dir = crate::paths::squad_folder();
    let paragraphs = squad::write_folder(&data, &dir)?;
    let mut all = Vec::new();
    for (a, article) in data.data.iter().enumerate() {
        for (p, para) in article.paragraphs.iter().enumerate() {
            let rel = squad::paragraph_path(a, &article.title, p);
            all.extend(
                para.qas
                    .iter()
                    .filter(|q| !q.is_impossible)
                    .map(|q| (q.question.clone(), rel.clone())),
            );
        }
    }
    if all.is_empty() {
        return Err(BenchError::Setup(format!(
            "no answerable questions in {}",
            squad_file.display()
        )));
    }
    let n = questions.clamp(1, all.len());
    let picked: Vec<&(String, String)> = (0..n).map(|i| &all[i * all.len() / n]).collect();

    let fail = |e: crate::workspace::WorkspaceError| BenchError::Setup(e.to_string());
    let mut ws =
        Workspace::open(engine, &dir, folder, KvStore::default_location()).map_err(fail)?;
    crate::service::index(&mut ws, false, &mut |_| {})
        .map_err(|e| BenchError::Setup(e.to_string()))?;
    let (mut hybrid, mut bm25, mut dense, mut mrr) = (0, 0, 0, 0.0);
    let t = Instant::now();
    for (question, gold) in &picked {
        let index = &ws.index;
        let path_of = |id: ChunkId| index.chunk(id).map(|c| c.path.clone());
        let mut rank = |how| -> Result<Vec<ChunkId>, BenchError> {
            index
                .ranking(&mut ws.embedder, question, k, how)
                .map_err(|e| BenchError::Setup(e.to_string()))
        };
        let (h, l, d) = (
            rank(Retrieval::Hybrid)?,
            rank(Retrieval::Bm25)?,
            rank(Retrieval::Dense)?,
        );
        let hit = |ids: &[ChunkId]| {
            ids.iter()
                .position(|&id| path_of(id).as_ref() == Some(gold))
        };
        if let Some(r) = hit(&h) {
            hybrid += 1;
            mrr += 1.0 / (r + 1) as f64;
        }
        bm25 += usize::from(hit(&l).is_some());
        dense += usize::from(hit(&d).is_some());
    }
    Ok(RetrievalReport {
        questions: n,
        k,
        paragraphs,
        chunks: ws.index.len(),
        recall_hybrid: hybrid as f64 / n as f64,
        recall_bm25: bm25 as f64 / n as f64,
        recall_dense: dense as f64 / n as f64,
        mrr_hybrid: mrr / n as f64,
        mean_query_ms: t.elapsed().as_secs_f64() * 1e3 / n as f64,
        brute_force_vectors: vectors,
        brute_force_search_ms: (vectors > 0).then(|| brute_force_ms(vectors)),
    })
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
