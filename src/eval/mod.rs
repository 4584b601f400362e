//! Evaluation data and metrics.

pub mod squad;
