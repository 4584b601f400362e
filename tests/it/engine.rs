//! The engine's promises: exactness, APE math, state round trips, bad input.

use ape_chat::engine::check::{self, SAMPLE_CHUNKS, SAMPLE_QUESTION};
use ape_chat::engine::ApeParams;

use crate::common::{engine, layout};

#[test]
fn one_chunk_parallel_reproduces_sequential_exactly() {
    let r = check::exactness(engine(), &layout(), SAMPLE_CHUNKS[1], SAMPLE_QUESTION, 24)
        .expect("exactness check runs");
    eprintln!("{r:?}");
    assert_eq!(r.steps, 24);
    assert!(r.parallel_vs_sequential <= 1e-4, "{r:?}");
    assert_eq!(r.ape_identity_vs_parallel, 0.0, "{r:?}");
}

#[test]
fn ape_attention_matches_the_f64_reference_in_every_layer() {
    let params = ApeParams {
        temperature: 0.7,
        scale: 0.8,
    };
    let r = check::ape_math(
        engine(),
        &layout(),
        &SAMPLE_CHUNKS,
        SAMPLE_QUESTION,
        params,
        4,
    )
    .expect("APE check runs");
    eprintln!("{r:?}");
    assert_eq!(r.layers, engine().info().n_layer as usize, "{r:?}");
    assert_eq!(r.layout_errors, 0, "{r:?}");
    assert!(r.rows > 0);
    assert!(r.max_abs_error <= 1e-5, "{r:?}");
}
