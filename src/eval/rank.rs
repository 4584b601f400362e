//! A record's contexts ranked against its question, as retrieval would rank
//! them: refinements that pick "the best chunks" (re-reading) need a
//! ranking, and in `--ask` that is the retrieval order. Evaluation records
//! come without one, so their contexts are ranked here with BM25 over the
//! record's own contexts (the lexical half of ape-chat's retrieval), never
//! with the gold answer.

use std::collections::HashMap;

const K1: f64 = 1.2;
const B: f64 = 0.75;

fn terms(text: &str) -> Vec<String> {
    super::score::normalize(text)
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Indices of `contexts`, best match for `question` first (ties keep the
/// given order).
pub fn bm25(question: &str, contexts: &[String]) -> Vec<usize> {
    let docs: Vec<Vec<String>> = contexts.iter().map(|c| terms(c)).collect();
    let n = docs.len() as f64;
    let avg = docs.iter().map(Vec::len).sum::<usize>() as f64 / n.max(1.0);
    let mut df: HashMap<&str, f64> = HashMap::new();
    for d in &docs {
        let mut seen: Vec<&str> = d.iter().map(String::as_str).collect();
        seen.sort_unstable();
        seen.dedup();
        for t in seen {
            *df.entry(t).or_default() += 1.0;
        }
    }
    let mut query = terms(question);
    query.sort_unstable();
    query.dedup();
    let score = |d: &[String]| -> f64 {
        query
            .iter()
            .map(|q| {
                let tf = d.iter().filter(|t| *t == q).count() as f64;
                let df = df.get(q.as_str()).copied().unwrap_or(0.0);
                let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * d.len() as f64 / avg.max(1.0)))
            })
            .sum()
    };
    let scores: Vec<f64> = docs.iter().map(|d| score(d)).collect();
    let mut order: Vec<usize> = (0..contexts.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paragraph_that_shares_the_rare_words_ranks_first() {
        let contexts = [
            "The castle was built in 1200 by the duke.",
            "Normandy is a region in France; the Normans came from Normandy.",
            "The river flows past the castle and the town.",
        ]
        .map(String::from);
        let order = bm25("In what country is Normandy located?", &contexts);
        assert_eq!(order[0], 1);
        assert_eq!(order.len(), 3);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, [0, 1, 2], "a permutation");
        // Nothing in common: the given order stays.
        assert_eq!(bm25("zebra?", &contexts), [0, 1, 2]);
    }
}
