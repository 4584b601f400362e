//! SQuAD-style answer scoring: normalised exact match, token F1 and "the
//! prediction contains a gold answer", each the max over gold answers; an
//! answer in parts contains the gold answer only when it holds every part.

/// Lower-case, drop punctuation and the articles a/an/the, collapse spaces.
pub fn normalize(s: &str) -> String {
    let lowered: String = s
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c.is_whitespace() {
                c
            } else {
                ' '
            }
        })
        .collect();
    lowered
        .split_whitespace()
        .filter(|w| !matches!(*w, "a" | "an" | "the"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// 1.0 if the normalised strings are equal.
pub fn exact_match(prediction: &str, gold: &str) -> f64 {
    f64::from(u8::from(normalize(prediction) == normalize(gold)))
}

/// Harmonic mean of token precision and recall (bag of words).
pub fn f1(prediction: &str, gold: &str) -> f64 {
    let p = normalize(prediction);
    let g = normalize(gold);
    let (p, g): (Vec<&str>, Vec<&str>) = (
        p.split_whitespace().collect(),
        g.split_whitespace().collect(),
    );
    if p.is_empty() || g.is_empty() {
        return f64::from(u8::from(p.is_empty() && g.is_empty()));
    }
    let mut remaining = g.clone();
    let mut common = 0;
    for w in &p {
        if let Some(i) = remaining.iter().position(|x| x == w) {
            remaining.swap_remove(i);
            common += 1;
        }
    }
    if common == 0 {
        return 0.0;
    }
    let (precision, recall) = (
        common as f64 / p.len() as f64,
        common as f64 / g.len() as f64,
    );
    2.0 * precision * recall / (precision + recall)
}

/// 1.0 if the normalised prediction contains a normalised gold answer.
pub fn contains(prediction: &str, gold: &str) -> f64 {
    let (p, g) = (normalize(prediction), normalize(gold));
    f64::from(u8::from(
        !g.is_empty() && format!(" {p} ").contains(&format!(" {g} ")),
    ))
}

/// The best of `f` over `golds`.
fn best(f: fn(&str, &str) -> f64, prediction: &str, golds: &[String]) -> f64 {
    golds.iter().map(|g| f(prediction, g)).fold(0.0, f64::max)
}

/// The three scores of `prediction`, each its best over `golds`; with
/// `parts` (an answer that needs several contexts), "contains" asks for an
/// alias of every part, wherever and in whatever order they appear, so it
/// stays independent of the answer's format.
pub fn score(prediction: &str, golds: &[String], parts: &[Vec<String>]) -> (f64, f64, f64) {
    let holds = if parts.is_empty() {
        best(contains, prediction, golds)
    } else {
        parts
            .iter()
            .map(|aliases| best(contains, prediction, aliases))
            .fold(1.0, f64::min)
    };
    (
        best(exact_match, prediction, golds),
        best(f1, prediction, golds),
        holds,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_follows_squad() {
        assert_eq!(
            normalize("The  Eiffel-Tower, in PARIS!"),
            "eiffel tower in paris"
        );
        assert_eq!(normalize("an apple a day"), "apple day");
    }

    #[test]
    fn exact_match_f1_and_contains() {
        assert_eq!(exact_match("the Normans.", "Normans"), 1.0);
        assert_eq!(exact_match("Normans in France", "Normans"), 0.0);
        // prediction 4 tokens, gold 2, overlap 2: P = 0.5, R = 1, F1 = 2/3.
        assert!((f1("Normans came from France", "Normans France") - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(f1("nothing shared", "Normans"), 0.0);
        assert_eq!(f1("", ""), 1.0);
        assert_eq!(contains("It was in 1066, clearly.", "1066"), 1.0);
        assert_eq!(contains("10666", "1066"), 0.0, "whole tokens only");
        let golds = vec!["France".to_string(), "Normandy, France".to_string()];
        assert_eq!(score("Normandy France", &golds, &[]), (1.0, 1.0, 1.0));
    }

    #[test]
    fn an_answer_in_parts_contains_the_gold_only_with_every_part() {
        let golds = vec!["(1) 1066 (2) William".to_string()];
        let parts = vec![
            vec!["1066".to_string()],
            vec!["William the Conqueror".to_string(), "William".to_string()],
        ];
        let contains = |p: &str| score(p, &golds, &parts).2;
        assert_eq!(contains("1. In 1066. 2. William"), 1.0);
        assert_eq!(contains("William, in 1066"), 1.0, "any order");
        assert_eq!(contains("(1) 1066 (2) Harold"), 0.0, "one part missing");
        assert_eq!(contains("William"), 0.0);
        assert_eq!(
            score("(1) 1066 (2) William", &golds, &parts),
            (1.0, 1.0, 1.0)
        );
    }
}
