//! Evaluation records, one JSON object per line:
//! `{"id", "question", "contexts": [...], "answers": [...], "group"?}`, and
//! the datasets they are made from (one file per source: a new dataset is a
//! new file here with its `load` and `to_records`).

pub mod squad;

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One question with its contexts (the chunks) and gold answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub id: String,
    pub question: String,
    pub contexts: Vec<String>,
    pub answers: Vec<String>,
    /// Where the contexts come from (a SQuAD article): records of one
    /// source share paragraphs, so data splits keep a source together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The context the question was written from (SQuAD's own paragraph),
    /// when the source says: where the answer is read from, what attention
    /// shares are judged against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold_context: Option<usize>,
    /// An answer that needs more than one context, in parts: it "contains"
    /// the gold answer only when it holds every part (each part a list of
    /// its gold aliases). Empty for a one-context record, whose `answers`
    /// are alternatives.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Vec<String>>,
}

/// Joins the source questions' ids in the id of a record that asks several.
pub const ID_JOIN: char = '+';

impl Record {
    /// The ids of the source questions this record asks (one, or each of a
    /// pair's): what keeps a calibration set and an evaluation set apart.
    pub fn question_ids(&self) -> impl Iterator<Item = &str> {
        self.id.split(ID_JOIN)
    }

    /// Content hash of everything the record is answered and scored from,
    /// so results rows are tied to the record's content, not its file name.
    /// `gold_context` is left out: it changes no answer or score (rows
    /// carry the attribution they were judged by), and files converted
    /// before it existed keep their rows.
    pub fn fingerprint(&self) -> String {
        let answered = Record {
            gold_context: None,
            ..self.clone()
        };
        let bytes = serde_json::to_vec(&answered).unwrap_or_default();
        blake3::hash(&bytes).to_hex()[..16].to_string()
    }
}

/// A dataset file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{}{}: {message}", path.display(), line.map_or(String::new(), |l| format!(":{l}")))]
    Invalid {
        path: PathBuf,
        line: Option<usize>,
        message: String,
    },
}

/// Reads JSON Lines records; a bad line is an error naming its number.
pub fn load(path: &Path) -> Result<Vec<Record>, DatasetError> {
    let io = |error| DatasetError::Io {
        path: path.to_owned(),
        error,
    };
    let f = std::fs::File::open(path).map_err(io)?;
    let mut out = Vec::new();
    for (i, line) in std::io::BufReader::new(f).lines().enumerate() {
        let line = line.map_err(io)?;
        if line.trim().is_empty() {
            continue;
        }
        let invalid = |message: String| DatasetError::Invalid {
            path: path.to_owned(),
            line: Some(i + 1),
            message,
        };
        let r: Record =
            serde_json::from_str(&line).map_err(|e| invalid(format!("not an eval record: {e}")))?;
        if r.contexts.is_empty() {
            return Err(invalid(format!("record `{}` has no contexts", r.id)));
        }
        out.push(r);
    }
    Ok(out)
}

/// Writes records as JSON Lines, atomically.
pub fn save(path: &Path, records: &[Record]) -> Result<(), DatasetError> {
    let io = |error| DatasetError::Io {
        path: path.to_owned(),
        error,
    };
    let mut buf = Vec::new();
    for r in records {
        serde_json::to_writer(&mut buf, r).map_err(|e| io(e.into()))?;
        buf.write_all(b"\n").map_err(io)?;
    }
    crate::fsutil::write_atomic(path, &[&buf]).map_err(io)
}

/// Keeps `n` of `records`, spread evenly over them (not one article).
pub fn spread(records: Vec<Record>, n: Option<usize>) -> Vec<Record> {
    match n.filter(|&n| n < records.len()) {
        Some(n) => {
            let total = records.len();
            (0..n).map(|i| records[i * total / n].clone()).collect()
        }
        None => records,
    }
}

/// `records` less those asking a question that one of `excluded` asks (a
/// pair goes if either of its questions does), so that a calibration set
/// and an evaluation set never share a question.
pub fn without_questions_of(mut records: Vec<Record>, excluded: &[Record]) -> Vec<Record> {
    let ids: std::collections::HashSet<&str> =
        excluded.iter().flat_map(Record::question_ids).collect();
    records.retain(|r| !r.question_ids().any(|id| ids.contains(id)));
    records
}

/// `records` reordered round-robin over their sources (each source's
/// records keep their order): any first N then span as many articles as
/// they can, so `eval --limit N`, or a run stopped early, is resampled over
/// many clusters rather than two.
pub fn interleave(records: Vec<Record>) -> Vec<Record> {
    let mut groups: Vec<(Option<String>, std::collections::VecDeque<Record>)> = Vec::new();
    for r in records {
        match groups.iter_mut().find(|(g, _)| *g == r.group) {
            Some((_, rs)) => rs.push_back(r),
            None => groups.push((r.group.clone(), [r].into())),
        }
    }
    let mut out = Vec::new();
    while groups.iter().any(|(_, rs)| !rs.is_empty()) {
        out.extend(groups.iter_mut().filter_map(|(_, rs)| rs.pop_front()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaving_deals_the_records_out_over_their_articles() {
        let rec = |id: &str, g: &str| Record {
            id: id.into(),
            question: String::new(),
            contexts: Vec::new(),
            answers: Vec::new(),
            group: Some(g.into()),
            gold_context: None,
            parts: Vec::new(),
        };
        let rs = vec![
            rec("a1", "a"),
            rec("a2", "a"),
            rec("a3", "a"),
            rec("b1", "b"),
            rec("c1", "c"),
            rec("c2", "c"),
        ];
        let ids: Vec<String> = interleave(rs).into_iter().map(|r| r.id).collect();
        assert_eq!(ids, ["a1", "b1", "c1", "a2", "c2", "a3"]);
        let pair = rec(&format!("x{ID_JOIN}y"), "a");
        assert_eq!(pair.question_ids().collect::<Vec<_>>(), ["x", "y"]);
        assert_eq!(rec("x", "a").question_ids().collect::<Vec<_>>(), ["x"]);
        let kept = without_questions_of(
            vec![pair, rec("z", "a"), rec(&format!("z{ID_JOIN}w"), "b")],
            &[rec("y", "c"), rec(&format!("q{ID_JOIN}w"), "c")],
        );
        let ids: Vec<&str> = kept.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["z"], "a pair goes with either question");
    }

    #[test]
    fn records_round_trip_and_bad_lines_are_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("d.jsonl");
        let recs = vec![
            Record {
                id: "a".into(),
                question: "q?".into(),
                contexts: vec!["c".into()],
                answers: vec!["x".into()],
                group: Some("g".into()),
                gold_context: None,
                parts: vec![vec!["x".into()], vec!["y".into(), "z".into()]],
            };
            2
        ];
        save(&p, &recs).expect("save");
        assert_eq!(load(&p).expect("load"), recs);
        std::fs::write(&p, "{\"id\": 1}\n").expect("write");
        assert!(load(&p).expect_err("bad").to_string().contains("d.jsonl:1"));
        assert_eq!(
            spread((0..10).map(|_| recs[0].clone()).collect(), Some(3)).len(),
            3
        );
    }
}
