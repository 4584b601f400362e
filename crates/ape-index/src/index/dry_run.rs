//! What indexing a folder would read, without indexing it
//! (`ape-chat index --dry-run`): every file the walk finds, read and
//! chunked exactly as the text stage reads it, with its chunks and tokens;
//! every file passed over, with the reason, and for the files passed over
//! as not documents what reading them would cost (`--all-files`).

use std::path::Path;

use serde::Serialize;

use super::update::{read_chunks, IndexProgress, Stage};
use super::IndexError;
use crate::ingest::documents::{copy_reason, text_signature, NOT_A_DOCUMENT};
use crate::ingest::{walk, Chunk, Extraction, Filters};

/// One file the index would read.
#[derive(Clone, Debug, Serialize)]
pub struct FilePlan {
    pub path: String,
    pub bytes: u64,
    pub chunks: usize,
    pub tokens: usize,
}

/// One file the index would pass over.
#[derive(Clone, Debug, Serialize)]
pub struct SkipPlan {
    pub path: String,
    pub reason: String,
    /// What it would cost to read, for a file passed over as not a
    /// document (`--all-files` reads it); `None` where it cannot be read
    /// at all (binary, too large, unreadable).
    pub chunks: Option<usize>,
    pub tokens: Option<usize>,
}

/// The whole plan, with its totals.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DryRun {
    pub read: Vec<FilePlan>,
    pub skipped: Vec<SkipPlan>,
    pub chunks: usize,
    pub tokens: usize,
    /// What the files passed over as not documents would have added.
    pub passed_over_chunks: usize,
    pub passed_over_tokens: usize,
}

/// Walks and reads `folder` as [`super::FolderIndex::update_text`] would,
/// chunks of `chunk_tokens` counted by `count`, each chunk's encoded
/// length by `encoded`; nothing is written. `keep` sees every chunk that
/// would be indexed (a benchmark's sample).
#[allow(clippy::too_many_arguments)]
pub fn dry_run(
    folder: &Path,
    filters: &Filters,
    extraction: &Extraction,
    chunk_tokens: usize,
    count: &dyn Fn(&str) -> usize,
    encoded: &dyn Fn(&str) -> usize,
    keep: &mut dyn FnMut(&Chunk),
    progress: &mut dyn FnMut(IndexProgress),
) -> Result<DryRun, IndexError> {
    let (files, walked_past) = walk(folder, filters).map_err(|e| IndexError::io(folder, e))?;
    let root = folder
        .canonicalize()
        .map_err(|e| IndexError::io(folder, e))?;
    let mut plan = DryRun::default();
    let cost = |chunks: &[Chunk]| {
        (
            chunks.len(),
            chunks.iter().map(|c| encoded(&c.text)).sum::<usize>(),
        )
    };
    let read = |abs: &Path, rel: &str, documents_only: bool| {
        let bytes = std::fs::read(abs).map_err(|e| e.to_string())?;
        read_chunks(
            abs,
            rel,
            &bytes,
            documents_only,
            extraction,
            chunk_tokens,
            count,
        )
        .map(|(chunks, _)| chunks)
    };
    let total = files.len() + walked_past.len();
    let mut texts: std::collections::HashMap<String, String> = Default::default();
    for (i, f) in files.iter().enumerate() {
        progress(IndexProgress::Stage {
            stage: Stage::Text,
            done: i,
            total,
        });
        let documents_only = filters.documents_only();
        // The first of files that say the same is read (as the index reads
        // them, in the walk's order); the others are its copies.
        let outcome = read(&f.abs, &f.rel, documents_only).and_then(|chunks| {
            let text = documents_only
                .then(|| text_signature(chunks.iter().map(|c| c.text.as_str())))
                .flatten();
            match text {
                Some(t) => match texts.get(&t) {
                    Some(original) => Err(copy_reason(original)),
                    None => {
                        texts.insert(t, f.rel.clone());
                        Ok(chunks)
                    }
                },
                None => Ok(chunks),
            }
        });
        match outcome {
            Ok(read) => {
                read.iter().for_each(&mut *keep);
                let (chunks, tokens) = cost(&read);
                plan.chunks += chunks;
                plan.tokens += tokens;
                plan.read.push(FilePlan {
                    path: f.rel.clone(),
                    bytes: f.size,
                    chunks,
                    tokens,
                });
            }
            Err(reason) => {
                // A page that copies others (or a file that copies
                // another) is read for its cost; a file that cannot be read
                // at all has none.
                let cost = reason
                    .starts_with(NOT_A_DOCUMENT)
                    .then(|| read(&f.abs, &f.rel, false).ok().map(|c| cost(&c)))
                    .flatten();
                let s = skip(&mut plan, f.rel.clone(), reason, cost);
                plan.skipped.push(s);
            }
        }
    }
    for (i, s) in walked_past.into_iter().enumerate() {
        progress(IndexProgress::Stage {
            stage: Stage::Text,
            done: files.len() + i,
            total,
        });
        let cost = s
            .reason
            .starts_with(NOT_A_DOCUMENT)
            .then(|| {
                read(&root.join(&s.path), &s.path, false)
                    .ok()
                    .map(|c| cost(&c))
            })
            .flatten();
        let s = skip(&mut plan, s.path, s.reason, cost);
        plan.skipped.push(s);
    }
    plan.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    progress(IndexProgress::Stage {
        stage: Stage::Text,
        done: total,
        total,
    });
    Ok(plan)
}

fn skip(plan: &mut DryRun, path: String, reason: String, cost: Option<(usize, usize)>) -> SkipPlan {
    if let Some((chunks, tokens)) = cost {
        plan.passed_over_chunks += chunks;
        plan.passed_over_tokens += tokens;
    }
    SkipPlan {
        path,
        reason,
        chunks: cost.map(|c| c.0),
        tokens: cost.map(|c| c.1),
    }
}
