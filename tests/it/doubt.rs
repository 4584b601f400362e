//! The doubt check: an answer from cached states whose first tokens are
//! unsure is begun again with sequential prefill, and the user sees only
//! that answer; a sure one is the cached mode's, token for token.

use std::path::Path;

use ape_chat::answer::AskOptions;
use ape_chat::engine::{generate::doubted, ApeParams, Mode, TierOptions};

use crate::tiers::{engine, open, options, QUESTION};

#[test]
fn a_doubted_answer_is_sequentials_and_a_sure_one_the_cached_modes() {
    let sample = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/sample"));
    let cache = tempfile::tempdir().expect("tempdir");
    let e = engine(TierOptions::default());
    let mut ws = open(&e, sample, cache.path());
    let ape = ApeParams::new(0.8, 1.0);
    let with = |mode| AskOptions { mode, ..options() };
    let doubting = |d| {
        with(Mode::Ape(ApeParams {
            doubt: Some(d),
            ..ape
        }))
    };
    let mut ask = |o: &AskOptions| {
        let mut shown = String::new();
        let a = ws
            .ask(QUESTION, &[], o, &mut |t| {
                shown.push_str(t.text);
                true
            })
            .expect("ask");
        assert_eq!(shown, a.generated.text, "what was shown is the answer");
        a
    };
    let cached = ask(&with(Mode::Ape(ape)));
    let exact = ask(&with(Mode::Sequential));
    assert_ne!(
        cached.generated.tokens, exact.generated.tokens,
        "a test that can tell them apart"
    );
    let first = &cached.generated.logprobs[..ApeParams::DOUBT_TOKENS];
    let mean = first.iter().sum::<f32>() / first.len() as f32;
    assert!(mean < 0.0, "{first:?}");

    // Just below the first tokens' mean: sure, the cached answer.
    let sure = ask(&doubting(mean - 1e-3));
    assert!(!sure.doubted && sure.notes.is_empty(), "{:?}", sure.notes);
    assert_eq!(
        sure.mode,
        Mode::Ape(ApeParams {
            doubt: Some(mean - 1e-3),
            ..ape
        })
    );
    assert_eq!(sure.generated.tokens, cached.generated.tokens);

    // Just above: doubted, and sequential prefill's answer, token for
    // token, with the first try's states counted and nothing of it shown.
    let unsure = ask(&doubting(mean + 1e-3));
    assert!(unsure.doubted);
    assert_eq!(unsure.mode, Mode::Sequential);
    assert_eq!(unsure.generated.tokens, exact.generated.tokens);
    assert_eq!(unsure.states.from_memory, 3, "{:?}", unsure.states);
    assert!(
        unsure.notes[0].contains("unsure of its first 4 tokens")
            && unsure.notes[0].contains("sequential prefill"),
        "{:?}",
        unsure.notes
    );
    assert!(unsure.ttft > unsure.generated.ttft, "the first try counts");

    // Fast never doubts, whatever the settings say.
    let settings = ape_chat::config::ApeSettings {
        doubt: Some(0.0),
        ..Default::default()
    };
    let (fast, _) = ape_chat::answer::Quality::Fast
        .modes(settings, Default::default())
        .expect("modes");
    assert!(matches!(fast, Mode::Ape(p) if p.doubt.is_none()));
}

#[test]
fn the_check_weighs_the_first_tokens_mean_and_doubts_an_empty_answer() {
    let k = ApeParams::DOUBT_TOKENS;
    let mut lp = vec![-0.1f32; k];
    lp.push(-50.0);
    assert!(!doubted(&lp, -0.2), "only the first {k} count");
    lp[0] = -1.0;
    assert!(doubted(&lp, -0.2 - 0.01));
    assert!(
        !doubted(&[-0.3], -0.5),
        "a short answer decides on what it has"
    );
    assert!(doubted(&[], -10.0));
}
