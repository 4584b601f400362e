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
