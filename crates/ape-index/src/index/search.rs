//! Which chunks answer a question: BM25, dense vectors, or both fused by
//! reciprocal rank (the default). A chunk without a vector yet (the vector
//! stage still running) is found by BM25 alone.

use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;

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

/// How many chunks a question reads: the `k` best, or every chunk of the
/// folder (APE reads them all on the same positions, past the window).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopK {
    Best(usize),
    All,
}

impl TopK {
    /// Chunks read from a folder of `chunks` chunks.
    pub fn of(self, chunks: usize) -> usize {
        match self {
            TopK::Best(k) => k.min(chunks),
            TopK::All => chunks,
        }
    }
}

impl Default for TopK {
    fn default() -> Self {
        TopK::Best(5)
    }
}

impl fmt::Display for TopK {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TopK::Best(k) => write!(f, "{k}"),
            TopK::All => f.write_str("all"),
        }
    }
}

impl FromStr for TopK {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "all" => Ok(TopK::All),
            n => match n.parse::<usize>() {
                Ok(k) if k > 0 => Ok(TopK::Best(k)),
                _ => Err(format!(
                    "top-k must be a number of chunks (1 or more) or `all`, not `{s}`"
                )),
            },
        }
    }
}

impl<'de> serde::Deserialize<'de> for TopK {
    /// A number or `"all"`, as in the config file (`top_k = 20`, `top_k = "all"`).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(u64),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::N(n) => n.to_string().parse(),
            Raw::S(s) => s.parse(),
        }
        .map_err(serde::de::Error::custom)
    }
}

impl serde::Serialize for TopK {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            TopK::Best(k) => s.serialize_u64(*k as u64),
            TopK::All => s.serialize_str("all"),
        }
    }
}

impl FolderIndex {
    /// The chunks a question reads, best first: every chunk of `files`
    /// (as [`Self::relative`] spells them) and the `top_k` best of the rest.
    /// Chunks no ranking placed (no matching term, no vector yet) follow
    /// the ranked ones in document order, with empty evidence.
    pub fn select(
        &self,
        embedder: &mut Embedder,
        question: &str,
        context: Option<&str>,
        top_k: TopK,
        files: &[String],
        how: Retrieval,
    ) -> Result<Vec<(Hit, ChunkRecord)>, IndexError> {
        if let (TopK::Best(k), []) = (top_k, files) {
            return self.search_in_conversation(embedder, question, context, k, how);
        }
        let mut pinned = HashSet::new();
        for f in files {
            let record = self
                .manifest
                .files
                .get(f)
                .ok_or_else(|| IndexError::NoSuchFile {
                    hint: self.hint(f),
                    path: f.clone(),
                })?;
            pinned.extend(record.chunks.iter().copied());
        }
        let n = self.len();
        let ranked = self.search_in_conversation(embedder, question, context, n, how)?;
        let mut rest = top_k.of(n);
        let mut seen = HashSet::new();
        let mut bodies = HashSet::new();
        let mut out = Vec::new();
        for (hit, chunk) in ranked {
            let take = pinned.contains(&hit.id) || rest > 0;
            if take {
                if !pinned.contains(&hit.id) {
                    rest -= 1;
                }
                seen.insert(hit.id);
                bodies.extend(self.body(hit.id));
                out.push((hit, chunk));
            }
        }
        // Unranked chunks: every one under `all` (one copy of a passage),
        // the files' others always.
        for (path, record) in &self.manifest.files {
            for &id in &record.chunks {
                let wanted = pinned.contains(&id) || (top_k == TopK::All && rest > 0);
                if !wanted || seen.contains(&id) {
                    continue;
                }
                if !pinned.contains(&id) && self.body(id).is_some_and(|b| !bodies.insert(b)) {
                    continue;
                }
                let Some(chunk) = self.manifest.chunks.get(&id) else {
                    continue;
                };
                if !pinned.contains(&id) {
                    rest -= 1;
                }
                debug_assert_eq!(&chunk.path, path);
                let hit = Hit {
                    id,
                    bm25_rank: None,
                    dense_rank: None,
                    score: 0.0,
                };
                out.push((hit, chunk.clone()));
            }
        }
        Ok(out)
    }

    /// `path` as the manifest spells it: relative to the folder, `/`
    /// between parts, `./` and a leading folder path dropped.
    pub fn relative(&self, path: &str) -> Result<String, IndexError> {
        let p = std::path::Path::new(path);
        let rel = if p.is_absolute() {
            let canonical = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
            canonical
                .strip_prefix(&self.folder)
                .map(|r| r.to_path_buf())
                .map_err(|_| IndexError::NoSuchFile {
                    path: path.to_string(),
                    hint: format!(": it is outside {}", self.folder.display()),
                })?
        } else {
            p.to_path_buf()
        };
        let parts: Vec<String> = rel
            .components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        Ok(parts.join("/"))
    }

    /// ": did you mean …?" for the indexed path closest to `rel` by name.
    fn hint(&self, rel: &str) -> String {
        let name = rel.rsplit('/').next().unwrap_or(rel).to_lowercase();
        self.manifest
            .files
            .keys()
            .find(|k| {
                let k = k.to_lowercase();
                k.ends_with(&name) || (!name.is_empty() && k.contains(&name))
            })
            .map(|k| format!(": did you mean {k}?"))
            .unwrap_or_default()
    }

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
        let mut bodies = HashSet::new();
        Ok(fuse(&lexical, &dense, usize::MAX)
            .into_iter()
            .filter_map(|h| self.manifest.chunks.get(&h.id).map(|c| (h, c.clone())))
            .filter(|(h, _)| self.body(h.id).is_none_or(|b| bodies.insert(b)))
            .take(k)
            .collect())
    }

    /// What a chunk says, whatever file it is in: its text less the
    /// `path › heading` header line, spaces collapsed, hashed. Two chunks
    /// with one body are one passage in two places (a page copied, a
    /// README in two folders): retrieval keeps the better-ranked.
    fn body(&self, id: ChunkId) -> Option<blake3::Hash> {
        let text = self.text(id).ok().flatten()?;
        let body = text.split_once('\n').map_or("", |(_, b)| b);
        let mut h = blake3::Hasher::new();
        for w in body.split_whitespace() {
            h.update(w.as_bytes());
            h.update(b" ");
        }
        Some(h.finalize())
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
        // Each ranking holds one copy of a passage, not always the same one.
        let mut bodies = HashSet::new();
        Ok(fuse_rankings(&alone, &with, usize::MAX)
            .into_iter()
            .filter_map(|h| self.manifest.chunks.get(&h.id).map(|c| (h, c.clone())))
            .filter(|(h, _)| self.body(h.id).is_none_or(|b| bodies.insert(b)))
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
