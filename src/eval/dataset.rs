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

/// SQuAD → records: answerable questions (unless `unanswerable`), each with
/// its paragraph and `contexts - 1` other paragraphs of the same article.
pub fn from_squad(squad: &Squad, contexts: usize, unanswerable: bool, seed: u64) -> Vec<Record> {
    let mut rng = super::stats::Rng::new(seed);
    let mut next = move |n: usize| rng.below(n);
    let mut out = Vec::new();
    for article in &squad.data {
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
        let recs = from_squad(&squad(), 3, false, 7);
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
            from_squad(&squad(), 3, false, 7),
            recs,
            "seeded: reproducible"
        );
        assert_eq!(from_squad(&squad(), 3, true, 7).len(), 2);
        assert_eq!(
            from_squad(&squad(), 9, false, 7)[0].contexts.len(),
            3,
            "limited by the article"
        );
    }

    #[test]
    fn records_round_trip_and_bad_lines_are_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("d.jsonl");
        let recs = from_squad(&squad(), 2, true, 1);
        save(&p, &recs).expect("save");
        assert_eq!(load(&p).expect("load"), recs);
        std::fs::write(&p, "{\"id\": 1}\n").expect("write");
        assert!(load(&p).expect_err("bad").to_string().contains("d.jsonl:1"));
    }
}
