//! Evaluation records (`{"id", "question", "contexts", "answers"}` per JSON
//! line) and the SQuAD v2 converter that makes them: each answerable
//! question with its own paragraph plus distractor paragraphs from the same
//! article, in a seeded shuffled order.

use std::io::{BufRead, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::squad::Squad;

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
}

/// Reads JSON Lines records; a bad line is an error naming its number.
pub fn load(path: &Path) -> anyhow::Result<Vec<Record>> {
    let f = std::fs::File::open(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in std::io::BufReader::new(f).lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let r: Record = serde_json::from_str(&line).map_err(|e| {
            anyhow::anyhow!("{}:{}: not an eval record: {e}", path.display(), i + 1)
        })?;
        anyhow::ensure!(
            !r.contexts.is_empty(),
            "{}:{}: record `{}` has no contexts",
            path.display(),
            i + 1,
            r.id
        );
        out.push(r);
    }
    Ok(out)
}

/// Writes records as JSON Lines.
pub fn save(path: &Path, records: &[Record]) -> anyhow::Result<()> {
    let mut buf = Vec::new();
    for r in records {
        serde_json::to_writer(&mut buf, r)?;
        buf.write_all(b"\n")?;
    }
    crate::fsutil::write_atomic(path, &[&buf])?;
    Ok(())
}

/// Which SQuAD articles a dataset draws on. Every fourth article (the
/// 4th, 8th, …) is kept for calibration and the rest for evaluation, so
/// the two never share a paragraph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Articles {
    All,
    Evaluation,
    Calibration,
}

impl Articles {
    fn includes(self, article: usize) -> bool {
        let calibration = article % 4 == 3;
        match self {
            Articles::All => true,
            Articles::Evaluation => !calibration,
            Articles::Calibration => calibration,
        }
    }
}

/// SQuAD → records: answerable questions (unless `unanswerable`), each with
/// its paragraph and `contexts - 1` other paragraphs of the same article,
/// from the chosen `articles`.
pub fn from_squad(
    squad: &Squad,
    contexts: usize,
    unanswerable: bool,
    seed: u64,
    articles: Articles,
) -> Vec<Record> {
    let mut rng = super::stats::Rng::new(seed);
    let mut next = move |n: usize| rng.below(n);
    let mut out = Vec::new();
    for (_, article) in squad
        .data
        .iter()
        .enumerate()
        .filter(|(i, _)| articles.includes(*i))
    {
        let paras = &article.paragraphs;
        for (pi, para) in paras.iter().enumerate() {
            for qa in para.qas.iter().filter(|q| unanswerable || !q.is_impossible) {
                let mut others: Vec<usize> = (0..paras.len()).filter(|&j| j != pi).collect();
                let mut ctx = vec![para.context.clone()];
                while ctx.len() < contexts && !others.is_empty() {
                    let j = others.swap_remove(next(others.len()));
                    ctx.push(paras[j].context.clone());
                }
                let gold = next(ctx.len());
                ctx.swap(0, gold);
                let mut answers: Vec<String> = qa.answers.iter().map(|a| a.text.clone()).collect();
                answers.dedup();
                out.push(Record {
                    id: qa.id.clone(),
                    question: qa.question.clone(),
                    contexts: ctx,
                    answers,
                    group: Some(article.title.clone()),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn squad() -> Squad {
        let json = r#"{"data":[{"title":"T","paragraphs":[
            {"context":"P0 about cats","qas":[{"id":"a","question":"Q0?","answers":[{"text":"cats"},{"text":"cats"}]}]},
            {"context":"P1 about dogs","qas":[{"id":"b","question":"Q1?","answers":[],"is_impossible":true}]},
            {"context":"P2 about owls","qas":[]}]}]}"#;
        serde_json::from_str(json).expect("squad")
    }

    #[test]
    fn converter_keeps_the_gold_paragraph_and_adds_distractors() {
        let recs = from_squad(&squad(), 3, false, 7, Articles::All);
        assert_eq!(
            recs.len(),
            1,
            "unanswerable questions are left out by default"
        );
        let r = &recs[0];
        assert_eq!(r.contexts.len(), 3);
        assert!(r.contexts.contains(&"P0 about cats".to_string()));
        assert_eq!(r.answers, ["cats"]);
        assert_eq!(
            from_squad(&squad(), 3, false, 7, Articles::All),
            recs,
            "seeded: reproducible"
        );
        assert_eq!(from_squad(&squad(), 3, true, 7, Articles::All).len(), 2);
        assert_eq!(
            from_squad(&squad(), 9, false, 7, Articles::All)[0]
                .contexts
                .len(),
            3,
            "limited by the article"
        );
    }

    #[test]
    fn evaluation_and_calibration_articles_never_meet() {
        let json = (0..8)
            .map(|i| format!(r#"{{"title":"A{i}","paragraphs":[{{"context":"P{i}","qas":[{{"id":"q{i}","question":"?","answers":[{{"text":"x"}}]}}]}}]}}"#))
            .collect::<Vec<_>>()
            .join(",");
        let squad: Squad = serde_json::from_str(&format!(r#"{{"data":[{json}]}}"#)).expect("squad");
        let groups = |a| -> Vec<String> {
            from_squad(&squad, 1, false, 1, a)
                .into_iter()
                .filter_map(|r| r.group)
                .collect()
        };
        assert_eq!(groups(Articles::Calibration), ["A3", "A7"]);
        assert_eq!(groups(Articles::Evaluation).len(), 6);
        assert!(groups(Articles::Evaluation)
            .iter()
            .all(|g| g != "A3" && g != "A7"));
        assert_eq!(groups(Articles::All).len(), 8);
    }

    #[test]
    fn records_round_trip_and_bad_lines_are_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("d.jsonl");
        let recs = from_squad(&squad(), 2, true, 1, Articles::All);
        save(&p, &recs).expect("save");
        assert_eq!(load(&p).expect("load"), recs);
        std::fs::write(&p, "{\"id\": 1}\n").expect("write");
        assert!(load(&p).expect_err("bad").to_string().contains("d.jsonl:1"));
    }
}
