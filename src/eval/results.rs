//! Resumable evaluation runs: predictions are appended to a JSON Lines
//! file record by record, so a killed run loses at most the record in
//! flight and a rerun answers only what is missing. A file may hold rows
//! made with several stamps (settings); a run reads and extends only its
//! own, so rows made with different settings never mix.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use super::datasets::Record;
use super::run::{evaluate, Prediction, Stamp};
use crate::compute::Budget;
use crate::engine::Mode;
use crate::states::States;

/// Why a run could not go on.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error(transparent)]
    Engine(#[from] crate::engine::EngineError),
}

/// The results file for `stamp` under the cache. Rows carry their record's
/// content hash, mode and stamp, so runs with other modes, APE values or
/// subsets of a dataset share a file and reuse what they have in common.
pub fn default_path(stamp: &Stamp) -> PathBuf {
    let mut h = blake3::Hasher::new();
    h.update(serde_json::to_string(stamp).unwrap_or_default().as_bytes());
    h.update(b"v4");
    crate::paths::eval_results_dir().join(format!("{}.jsonl", &h.finalize().to_hex()[..16]))
}

/// A results file, as far as one stamp is concerned.
pub struct Results {
    path: PathBuf,
    stamp: Stamp,
    /// This stamp's rows.
    pub rows: Vec<Prediction>,
    /// Rows made with other settings (left alone).
    pub other: usize,
}

impl Results {
    /// Reads `path` (a missing file is empty; a torn last line from a
    /// killed run, or a row of an older format, is skipped).
    pub fn open(path: &Path, stamp: &Stamp) -> Self {
        let all: Vec<Prediction> = std::fs::File::open(path)
            .map(|f| {
                std::io::BufReader::new(f)
                    .lines()
                    .map_while(Result::ok)
                    .filter_map(|l| serde_json::from_str(&l).ok())
                    .collect()
            })
            .unwrap_or_default();
        let total = all.len();
        let rows: Vec<Prediction> = all.into_iter().filter(|p| p.settings == *stamp).collect();
        Self {
            path: path.to_owned(),
            stamp: stamp.clone(),
            other: total - rows.len(),
            rows,
        }
    }

    /// This stamp's rows for `records` as they are now: a row made for an
    /// earlier version of a record (same id, other content) is left out.
    pub fn of<'a>(&'a self, records: &[Record]) -> Vec<&'a Prediction> {
        let current: HashMap<&str, String> = records
            .iter()
            .map(|r| (r.id.as_str(), r.fingerprint()))
            .collect();
        self.rows
            .iter()
            .filter(|p| current.get(p.id.as_str()) == Some(&p.record))
            .collect()
    }

    /// Per record, the modes (and APE settings) it has no row for yet.
    pub fn missing<'r>(
        &self,
        records: &'r [Record],
        modes: &[Mode],
    ) -> Vec<(&'r Record, Vec<Mode>)> {
        let done = self.of(records);
        records
            .iter()
            .map(|r| {
                let todo = modes
                    .iter()
                    .copied()
                    .filter(|&m| !done.iter().any(|p| p.id == r.id && p.is(m)))
                    .collect::<Vec<_>>();
                (r, todo)
            })
            .filter(|(_, todo)| !todo.is_empty())
            .collect()
    }

    /// Answers what is missing, record by record, appending each record's
    /// rows as soon as they exist; `cancel` stops between records. Each
    /// record waits while a question is answered anywhere on the machine
    /// (the compute budget). `progress` gets records done and to do.
    pub fn complete(
        &mut self,
        states: &States<'_>,
        records: &[Record],
        modes: &[Mode],
        cancel: &AtomicBool,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<(), ResultsError> {
        let todo = self.missing(records, modes);
        let io = |error| ResultsError::Io {
            path: self.path.clone(),
            error,
        };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(io)?;
        let budget = Budget::default();
        for (i, (r, missing)) in todo.iter().enumerate() {
            if cancel.load(Ordering::Relaxed) {
                break;
            }
            progress(i, todo.len());
            let _turn = loop {
                match budget.background().map_err(io)? {
                    Some(held) => break held,
                    None => std::thread::sleep(std::time::Duration::from_millis(200)),
                }
            };
            let preds = evaluate(states, r, missing, &self.stamp)?;
            for p in &preds {
                let line = serde_json::to_string(p).map_err(|e| io(e.into()))?;
                writeln!(out, "{line}").map_err(io)?;
            }
            out.flush().map_err(io)?;
            self.rows.extend(preds);
        }
        progress(todo.len(), todo.len());
        Ok(())
    }
}
