//! Reciprocal-rank fusion of the BM25 and dense rankings: robust to their
//! incomparable score scales, and a chunk either ranker loves still surfaces.

use std::collections::HashMap;

use serde::Serialize;

use super::manifest::ChunkId;

/// The RRF constant from Cormack et al. (2009).
pub const RRF_K: f64 = 60.0;

/// One fused result with the evidence behind it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Hit {
    pub id: ChunkId,
    /// 1-based rank in BM25, if it ranked there.
    pub bm25_rank: Option<usize>,
    /// 1-based rank by cosine similarity, if it ranked there.
    pub dense_rank: Option<usize>,
    pub score: f64,
}

/// Fuses two best-first id lists; ties keep BM25 order, then id.
pub fn fuse(bm25: &[ChunkId], dense: &[ChunkId], top_k: usize) -> Vec<Hit> {
    let mut hits: HashMap<ChunkId, Hit> = HashMap::new();
    for (rank, &id) in bm25.iter().enumerate() {
        let h = hits.entry(id).or_insert(Hit {
            id,
            bm25_rank: None,
            dense_rank: None,
            score: 0.0,
        });
        h.bm25_rank = Some(rank + 1);
        h.score += 1.0 / (RRF_K + (rank + 1) as f64);
    }
    for (rank, &id) in dense.iter().enumerate() {
        let h = hits.entry(id).or_insert(Hit {
            id,
            bm25_rank: None,
            dense_rank: None,
            score: 0.0,
        });
        h.dense_rank = Some(rank + 1);
        h.score += 1.0 / (RRF_K + (rank + 1) as f64);
    }
    let mut out: Vec<Hit> = hits.into_values().collect();
    out.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(
                a.bm25_rank
                    .unwrap_or(usize::MAX)
                    .cmp(&b.bm25_rank.unwrap_or(usize::MAX)),
            )
            .then(a.id.cmp(&b.id))
    });
    out.truncate(top_k);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_wins_and_ranks_are_reported() {
        let hits = fuse(&[1, 2, 3], &[3, 4, 1], 4);
        assert_eq!(hits[0].id, 1); // 1st and 3rd beats 3rd and 1st on the BM25 tie-break
        assert_eq!(hits[1].id, 3);
        assert_eq!(hits[0].bm25_rank, Some(1));
        assert_eq!(hits[0].dense_rank, Some(3));
        let four = hits.iter().find(|h| h.id == 4).expect("4 present");
        assert_eq!((four.bm25_rank, four.dense_rank), (None, Some(2)));
        assert_eq!(hits.len(), 4);
    }
}
