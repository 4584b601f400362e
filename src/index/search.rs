//! Which chunks answer a question: BM25, dense vectors, or both fused by
//! reciprocal rank (the default). A chunk without a vector yet (the vector
//! stage still running) is found by BM25 alone.

use super::hybrid::{fuse, Hit};
use super::manifest::{ChunkId, ChunkRecord};
use super::{FolderIndex, IndexError};
use crate::index::dense::Embedder;

/// How chunks are ranked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Retrieval {
    /// BM25 and dense rankings fused by reciprocal rank.
    #[default]
    Hybrid,
    Bm25,
    Dense,
}

impl FolderIndex {
    /// The `k` best chunks for `question`.
    pub fn search(
        &self,
        embedder: &mut Embedder,
        question: &str,
        k: usize,
        how: Retrieval,
    ) -> Result<Vec<(Hit, ChunkRecord)>, IndexError> {
        let depth = (k * 4).max(50);
        let lexical = match how {
            Retrieval::Dense => Vec::new(),
            _ => self.bm25.search(question, depth)?,
        };
        let dense = match how {
            Retrieval::Bm25 => Vec::new(),
            _ => self.dense(embedder, question, depth)?,
        };
        Ok(fuse(&lexical, &dense, usize::MAX)
            .into_iter()
            .filter_map(|h| self.manifest.chunks.get(&h.id).map(|c| (h, c.clone())))
            .take(k)
            .collect())
    }

    /// The `k` best chunks for `question` asked after earlier turns whose
    /// text is `context`: the ranking of the question alone and that of
    /// the question with the context, fused by reciprocal rank. Without
    /// context, exactly [`Self::search`].
    pub fn search_in_conversation(
        &self,
        embedder: &mut Embedder,
        question: &str,
        context: Option<&str>,
        k: usize,
        how: Retrieval,
    ) -> Result<Vec<(Hit, ChunkRecord)>, IndexError> {
        let Some(context) = context else {
            return self.search(embedder, question, k, how);
        };
        let depth = (k * 4).max(50);
        let alone = self.search(embedder, question, depth, how)?;
        let with = self.search(embedder, &format!("{context}\n{question}"), depth, how)?;
        Ok(fuse_rankings(&alone, &with, k)
            .into_iter()
            .filter_map(|h| self.manifest.chunks.get(&h.id).map(|c| (h, c.clone())))
            .collect())
    }

    /// The `k` best chunk ids by one ranking alone (retrieval benchmarks).
    pub fn ranking(
        &self,
        embedder: &mut Embedder,
        question: &str,
        k: usize,
        how: Retrieval,
    ) -> Result<Vec<ChunkId>, IndexError> {
        Ok(match how {
            Retrieval::Bm25 => self.bm25.search(question, k)?,
            Retrieval::Dense => self.dense(embedder, question, k)?,
            Retrieval::Hybrid => self
                .search(embedder, question, k, how)?
                .into_iter()
                .map(|(h, _)| h.id)
                .collect(),
        })
    }

    fn dense(
        &self,
        embedder: &mut Embedder,
        question: &str,
        k: usize,
    ) -> Result<Vec<ChunkId>, IndexError> {
        if self.vectors.is_empty() {
            return Ok(Vec::new()); // nothing to compare with: skip the embedding
        }
        let q = embedder.embed(&[question])?.pop().unwrap_or_default();
        Ok(self.vectors.search(&q, k))
    }
}

/// Two rankings of the same question fused by reciprocal rank; each hit
/// keeps the evidence (BM25 and dense ranks) from the ranking that placed
/// it higher, with the fused score.
fn fuse_rankings(a: &[(Hit, ChunkRecord)], b: &[(Hit, ChunkRecord)], k: usize) -> Vec<Hit> {
    let ids = |r: &[(Hit, ChunkRecord)]| r.iter().map(|(h, _)| h.id).collect::<Vec<_>>();
    // `fuse` reports the rank in `a` as BM25's and in `b` as dense's.
    fuse(&ids(a), &ids(b), k)
        .into_iter()
        .filter_map(|f| {
            let in_a = f.bm25_rank.map(|r| (r, &a[r - 1].0));
            let in_b = f.dense_rank.map(|r| (r, &b[r - 1].0));
            let best = match (in_a, in_b) {
                (Some(x), Some(y)) => Some(if y.0 < x.0 { y } else { x }),
                (x, y) => x.or(y),
            };
            best.map(|(_, h)| Hit {
                score: f.score,
                ..h.clone()
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranked(ids: &[ChunkId]) -> Vec<(Hit, ChunkRecord)> {
        ids.iter()
            .enumerate()
            .map(|(i, &id)| {
                let hit = Hit {
                    id,
                    bm25_rank: Some(i + 1),
                    dense_rank: Some(100 + i),
                    score: 0.0,
                };
                let chunk = ChunkRecord {
                    path: format!("f{id}.md"),
                    lines: (1, 2),
                    heading: Vec::new(),
                    place: None,
                    tokens: 10,
                    state: String::new(),
                };
                (hit, chunk)
            })
            .collect()
    }

    #[test]
    fn a_follow_up_keeps_chunks_both_rankings_agree_on_and_each_rankings_best() {
        // The question alone ranks 1, 2, 3; with the conversation, 7, 3, 1.
        let fused = fuse_rankings(&ranked(&[1, 2, 3]), &ranked(&[7, 3, 1]), 3);
        let ids: Vec<ChunkId> = fused.iter().map(|h| h.id).collect();
        // 1: 1/61 + 1/63; 3: 1/63 + 1/62; 7: 1/61; 2: 1/62.
        assert_eq!(ids, [1, 3, 7]);
        // Evidence from the ranking that placed it higher: 3 came second
        // with the conversation (its second entry), third alone.
        assert_eq!(fused[1].bm25_rank, Some(2));
        assert_eq!(fused[1].dense_rank, Some(101));
        let expected = 1.0 / 63.0 + 1.0 / 62.0;
        assert!((fused[1].score - expected).abs() < 1e-12);
    }
}
